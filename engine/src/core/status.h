// What every engine call answers: Ok, or an error code and a message a person can act on.
#pragma once

#include <string>
#include <utility>

namespace llamadesk {

enum class ErrorCode {
    Ok = 0,
    InvalidArgument,
    FileNotFound,
    BadFormat,             // the file is not what it claims, or is corrupt / hostile
    Unsupported,           // a valid file using something we do not support (yet)
    TokenizerMismatch,     // tokenizer missing, or its vocabulary does not fit the model
    OutOfMemory,
    NoModel,
    UnknownConversation,
    ContextFull,           // the conversation would exceed the model's context length
    BackendUnavailable,
    Internal,
};

struct Status {
    ErrorCode code = ErrorCode::Ok;
    std::string message;

    bool ok() const { return code == ErrorCode::Ok; }
    static Status success() { return {}; }
    static Status error(ErrorCode code, std::string message) { return {code, std::move(message)}; }
};

const char* error_code_name(ErrorCode code);

}  // namespace llamadesk
