#include "settings/system_keyring.h"

#ifdef LLAMADESK_HAVE_QTKEYCHAIN
#include <QEventLoop>
#include <QTimer>
#include <qt6keychain/keychain.h>
#endif

namespace system_keyring {

#ifdef LLAMADESK_HAVE_QTKEYCHAIN

namespace {

const QString kService = QStringLiteral("LlamaDesk API keys");
// Long enough for a person to type the keyring's password when it asks to be unlocked.
constexpr int kAnswerMs = 60000;

// Jobs live on the heap and go with deleteLater(): QtKeychain still posts to a job after finished().
// A job that has not answered in time deletes itself whenever it does.
template <typename JobType, typename Fill>
Answer run(JobType* job, Fill fill) {
    job->setAutoDelete(false);
    QEventLoop loop;
    Answer answer;
    bool finished = false;
    QObject::connect(job, &QKeychain::Job::finished, &loop, [&] {
        finished = true;
        answer.ok = job->error() == QKeychain::NoError;
        if (!answer.ok) answer.error = job->errorString();
        fill(*job, answer);
        loop.quit();
    });
    QTimer::singleShot(kAnswerMs, &loop, &QEventLoop::quit);
    job->start();
    if (!finished) loop.exec();
    if (!finished) {
        job->setAutoDelete(true);
        return {false, QString(), QStringLiteral("no answer in %1 s").arg(kAnswerMs / 1000)};
    }
    job->deleteLater();
    return answer;
}

}  // namespace

bool built_in() { return true; }

Answer read(const QString& key) {
    auto* job = new QKeychain::ReadPasswordJob(kService);
    job->setKey(key);
    return run(job, [](QKeychain::ReadPasswordJob& done, Answer& answer) {
        if (answer.ok) answer.value = done.textData();
        if (done.error() == QKeychain::EntryNotFound) answer.error.clear();
    });
}

Answer write(const QString& key, const QString& value) {
    auto* job = new QKeychain::WritePasswordJob(kService);
    job->setKey(key);
    job->setTextData(value);
    return run(job, [](QKeychain::WritePasswordJob&, Answer&) {});
}

Answer remove(const QString& key) {
    auto* job = new QKeychain::DeletePasswordJob(kService);
    job->setKey(key);
    return run(job, [](QKeychain::DeletePasswordJob& done, Answer& answer) {
        if (done.error() == QKeychain::EntryNotFound) answer = {true, QString(), QString()};
    });
}

#else

namespace {
Answer absent() { return {false, QString(), QStringLiteral("this build has no keyring support (QtKeychain)")}; }
}  // namespace

bool built_in() { return false; }
Answer read(const QString&) { return absent(); }
Answer write(const QString&, const QString&) { return absent(); }
Answer remove(const QString&) { return absent(); }

#endif

}  // namespace system_keyring
