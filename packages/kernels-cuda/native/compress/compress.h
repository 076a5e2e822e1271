// Ring compress kernels: the registration contract. native/addon.cpp calls RegisterCompress(env, exports)
// once from the addon's Init; native/compress/binding.cpp defines exports.compress.
#pragma once

#include <napi.h>

void RegisterCompress(Napi::Env env, Napi::Object exports);
