// The model that ships with LlamaDesk, made by resources/guide-model/: its name and where it is.
#pragma once

#include <string>

namespace llamadesk {

inline constexpr const char* kBuiltinModelName = "LlamaDesk Guide";
inline constexpr const char* kBuiltinModelFile = "llamadesk-guide.gguf";

// $LLAMADESK_BUILTIN_MODEL when set (whether or not the file exists, so a wrong value is reported
// when it is opened); else the file next to the running executable (a build tree); else
// share/llamadesk/ under the executable's prefix (an installed bin/..); else "".
std::string builtin_model_path();

}  // namespace llamadesk
