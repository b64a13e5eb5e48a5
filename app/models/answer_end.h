// Why an answer ended, as the window keeps and shows it: the engine's reasons (llamadesk::StopReason)
// and Interrupted, an answer that was streaming when LlamaDesk ended. QML compares these
// (AnswerEnd.Cancelled); only the saved and exported files spell them out (name(), from_name()).
#pragma once

#include <QObject>
#include <QString>
#include <QtQml/qqmlregistration.h>

#include <llamadesk/engine.h>

namespace AnswerEnd {
Q_NAMESPACE
QML_ELEMENT

// The engine's reasons one up, so that None is 0, what a Message's {} gives.
enum Reason {
    None,  // a question, an answer still streaming, or a name not known
    Eos = 1 + int(llamadesk::StopReason::Eos),
    StopString = 1 + int(llamadesk::StopReason::StopString),
    MaxTokens = 1 + int(llamadesk::StopReason::MaxTokens),
    Cancelled = 1 + int(llamadesk::StopReason::Cancelled),
    ContextFull = 1 + int(llamadesk::StopReason::ContextFull),
    Error = 1 + int(llamadesk::StopReason::Error),
    Interrupted = 100,
};
Q_ENUM_NS(Reason)

inline Reason of(llamadesk::StopReason reason) { return Reason(1 + int(reason)); }
// The files' names: the engine's stop_reason_name(), "interrupted", and none for None.
QString name(Reason reason);
Reason from_name(const QString& name);

}  // namespace AnswerEnd
