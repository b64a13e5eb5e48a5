// Which compute backend runs a model.
#pragma once


namespace llamadesk {

enum class BackendKind { Auto, Cpu, Cuda };

}  // namespace llamadesk
