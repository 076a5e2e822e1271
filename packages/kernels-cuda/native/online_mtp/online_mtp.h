// Online c128 MTP kernels: this file is the registration contract.
// native/addon.cpp calls RegisterOnlineMtp(env, exports) once from the addon's Init. Include "common.h" for the
// shared error / device-buffer / context helpers.
#pragma once

#include <napi.h>

void RegisterOnlineMtp(Napi::Env env, Napi::Object exports);
