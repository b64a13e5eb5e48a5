#include "models/answer_end.h"

#include <QMetaEnum>

namespace AnswerEnd {

QString name(Reason reason) {
    if (reason == None)
        return {};
    if (reason == Interrupted)
        return QStringLiteral("interrupted");
    return QString::fromLatin1(llamadesk::stop_reason_name(llamadesk::StopReason(int(reason) - 1)));
}

Reason from_name(const QString& text) {
    const QMetaEnum reasons = QMetaEnum::fromType<Reason>();
    for (int i = 0; i < reasons.keyCount(); ++i)
        if (const Reason r = Reason(reasons.value(i)); r != None && name(r) == text)
            return r;
    return None;
}

}  // namespace AnswerEnd
