#include "interrupt.h"

#include <csignal>

namespace llamadesk::cli {

namespace {

std::atomic<bool> g_cancel{false};

extern "C" void on_interrupt(int) { g_cancel.store(true); }

}  // namespace

InterruptGuard::InterruptGuard() {
    g_cancel = false;
    previous_ = std::signal(SIGINT, on_interrupt);
}

InterruptGuard::~InterruptGuard() { std::signal(SIGINT, previous_); }

const std::atomic<bool>* InterruptGuard::flag() { return &g_cancel; }

}  // namespace llamadesk::cli
