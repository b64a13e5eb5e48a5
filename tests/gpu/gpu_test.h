// Skipping GPU tests where there is nothing to run them on.
#pragma once

#include <QTest>
#include <string>

#include "backends/backend.h"

// Skips the current test (or, in initTestCase, the whole file) with the reason when this build
// has no CUDA backend or no usable device.
#define LLAMADESK_REQUIRE_CUDA()                                                            \
    do {                                                                                    \
        std::string why_;                                                                   \
        if (!llamadesk::cuda_backend_available(&why_))                                      \
            QSKIP(qPrintable(QStringLiteral("no CUDA device: %1").arg(QString::fromStdString(why_)))); \
    } while (0)
