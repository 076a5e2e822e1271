// STUB, to be replaced by the online c128 MTP bindings (issue 5). Registers nothing yet.
#include "online_mtp/online_mtp.h"

void RegisterOnlineMtp(Napi::Env /*env*/, Napi::Object /*exports*/) {}
