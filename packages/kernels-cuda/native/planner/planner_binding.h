#pragma once
#include <napi.h>
// Registers the compress-planner entry points (native/planner/binding.cpp).
void RegisterPlanner(Napi::Env env, Napi::Object exports);
