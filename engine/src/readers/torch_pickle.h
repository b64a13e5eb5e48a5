// The state dict inside a torch.save archive (data.pkl), read by a restricted unpickler that never
// executes anything. It knows the opcodes tensor checkpoints use (protocol 2, and 4's framing)
// and a handful of GLOBALs: collections.OrderedDict, torch._utils._rebuild_tensor_v2 and
// _rebuild_parameter, and the storage types. Any other GLOBAL is refused by name, before anything
// else happens. Memo references and persistent ids (the storages) are resolved; sizes are bounded
// by the pickle's own length.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/dtype.h"

namespace llamadesk {

struct PickledTensor {
    std::string name;
    std::string storage_key;     // the archive entry data/<storage_key> holds the storage
    DType dtype = DType::F32;
    int64_t storage_numel = 0;   // elements of the storage, as the pickle declares them
    int64_t storage_offset = 0;  // in elements
    std::vector<int64_t> shape, stride;
};

// The name -> tensor entries of the pickled dict, in its order. source names the pickle in messages.
std::vector<PickledTensor> read_torch_state_dict(std::string_view pickle, const std::string& source);

}  // namespace llamadesk
