// One Stop flag per conversation, shared by the GUI thread (which raises it) and the worker (whose
// engine reads it once per token of that conversation's answer). Flags live as long as this
// object, so a pointer handed to an answer stays valid however the conversation ends.
#pragma once

#include <QMutex>
#include <QMutexLocker>
#include <QString>
#include <atomic>
#include <memory>
#include <unordered_map>

class CancelFlags {
public:
    std::atomic<bool>* of(const QString& key) {
        QMutexLocker lock(&mutex_);
        std::unique_ptr<std::atomic<bool>>& flag = flags_[key];
        if (!flag) flag = std::make_unique<std::atomic<bool>>(false);
        return flag.get();
    }
    // Every answer in progress ends at its next token (quitting).
    void raiseAll() {
        QMutexLocker lock(&mutex_);
        for (const auto& [key, flag] : flags_) flag->store(true);
    }

private:
    QMutex mutex_;
    std::unordered_map<QString, std::unique_ptr<std::atomic<bool>>> flags_;
};
