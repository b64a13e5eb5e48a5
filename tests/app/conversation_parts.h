// The window's conversation parts wired as AppContext wires them to each other, with no worker
// and no saver: their requests are only signals, and a test plays the worker's answers back.
#pragma once

#include <QSettings>
#include <QTemporaryDir>

#include "conversations/message_composer.h"
#include "models/chat_format_choice.h"

struct ConversationParts {
    // An answer's end as the worker reports it.
    static llamadesk::GenerationResult ended(llamadesk::StopReason reason, const std::string& text = {},
                                             llamadesk::Status status = {}) {
        llamadesk::GenerationResult r;
        r.stop_reason = reason;
        r.text = text;
        r.tokens.assign(text.size(), 1);
        r.status = std::move(status);
        return r;
    }

    QTemporaryDir dir;
    QSettings settings{dir.path() + "/settings.ini", QSettings::IniFormat};
    CancelFlags cancel;
    ConversationList list{dir.path() + "/data", &settings};
    Generation generation{&list, &cancel};
    MessageComposer composer{&list, &generation};
    ChatFormatChoice format{&list, &generation};
};
