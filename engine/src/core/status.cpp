#include "core/status.h"

namespace llamadesk {

const char* error_code_name(ErrorCode code) {
    switch (code) {
    case ErrorCode::Ok: return "Ok";
    case ErrorCode::InvalidArgument: return "InvalidArgument";
    case ErrorCode::FileNotFound: return "FileNotFound";
    case ErrorCode::BadFormat: return "BadFormat";
    case ErrorCode::Unsupported: return "Unsupported";
    case ErrorCode::TokenizerMismatch: return "TokenizerMismatch";
    case ErrorCode::OutOfMemory: return "OutOfMemory";
    case ErrorCode::NoModel: return "NoModel";
    case ErrorCode::UnknownConversation: return "UnknownConversation";
    case ErrorCode::ContextFull: return "ContextFull";
    case ErrorCode::BackendUnavailable: return "BackendUnavailable";
    case ErrorCode::Internal: return "Internal";
    }
    return "Unknown";
}

}  // namespace llamadesk
