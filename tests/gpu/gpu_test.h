// Skipping GPU tests where there is nothing to run them on.
#pragma once

#include <QTest>
#include <cstdlib>
#include <string>

#include "backends/backend.h"

// Skips the current test (in initTestCase: the whole file) with the reason when this build has
// no CUDA backend or the machine no usable device. With LLAMADESK_REQUIRE_GPU set (run-all.sh
// sets it on a lent GPU) that is a failure instead, so a broken driver cannot pass as skips.
#define LLAMADESK_REQUIRE_CUDA()                                                                   \
    do {                                                                                           \
        std::string why_;                                                                          \
        if (!llamadesk::cuda_backend_available(&why_)) {                                           \
            const QString message_ = QStringLiteral("no CUDA device: %1").arg(QString::fromStdString(why_)); \
            if (std::getenv("LLAMADESK_REQUIRE_GPU")) QFAIL(qPrintable(message_));                 \
            QSKIP(qPrintable(message_));                                                           \
        }                                                                                          \
    } while (0)
