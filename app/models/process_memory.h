// This process's resident memory, as the kernel counts it: what a memory-mapped checkpoint really
// occupies (pages touched), plus the KV pool, the working buffers and the window itself.
#pragma once

#include <QtGlobal>

// Bytes resident now (VmRSS), or -1 where /proc is not available.
qint64 process_resident_bytes();
