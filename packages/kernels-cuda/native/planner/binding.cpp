#include "planner/planner_binding.h"
#include "common.h"
void RegisterPlanner(Napi::Env, Napi::Object) {}
