// The engine's name for a conversation.
#pragma once

#include <cstdint>

namespace llamadesk {

using ConversationId = int64_t;

}  // namespace llamadesk
