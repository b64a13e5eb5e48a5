#include "readers/torch_pickle.h"

#include <cstring>
#include <memory>
#include <unordered_map>

#include "core/error.h"
#include "readers/byte_cursor.h"

namespace llamadesk {

namespace {

struct Value;
// Shared, as pickle objects are: SETITEMS and APPENDS change a dict or list in place, and a memo
// reference is the same object, never a copy.
using Ref = std::shared_ptr<Value>;

struct Value {
    enum class Kind { None, Bool, Int, Float, Text, Tuple, List, Dict, Global, Storage, Tensor };
    Kind kind = Kind::None;
    int64_t integer = 0;
    double real = 0;
    std::string text;  // Text: the string or bytes; Global: "module.name"; Storage: its key
    std::vector<Ref> items;                     // Tuple, List
    std::vector<std::pair<Ref, Ref>> pairs;     // Dict
    DType dtype = DType::F32;                   // Storage
    int64_t numel = 0;                          // Storage
    Ref storage;                                // Tensor
    int64_t offset = 0;                         // Tensor
    std::vector<int64_t> shape, stride;         // Tensor
};

constexpr size_t kMaxStack = 1 << 20;

// The storage types torch writes, by GLOBAL name.
constexpr std::pair<std::string_view, DType> kStorages[] = {
    {"torch.FloatStorage", DType::F32}, {"torch.HalfStorage", DType::F16}, {"torch.BFloat16Storage", DType::BF16}};

constexpr std::string_view kCallables[] = {"collections.OrderedDict", "torch._utils._rebuild_tensor_v2",
                                           "torch._utils._rebuild_parameter"};

class Unpickler {
public:
    Unpickler(std::string_view pickle, const std::string& source)
        : in_(reinterpret_cast<const uint8_t*>(pickle.data()), pickle.size(), source), source_(source) {}
    ~Unpickler() {
        for (const Ref& v : all_) {
            v->items.clear();
            v->pairs.clear();
            v->storage.reset();
        }
    }
    Unpickler(const Unpickler&) = delete;
    Unpickler& operator=(const Unpickler&) = delete;

    Ref run() {
        for (;;) {
            const uint8_t op = in_.read<uint8_t>("pickle opcode");
            if (op == '.') {
                if (stack_.size() != 1) error("the pickle stops with " + std::to_string(stack_.size()) + " values");
                return stack_.back();
            }
            step(op);
        }
    }

private:
    [[noreturn]] void error(const std::string& what) const {
        fail(ErrorCode::BadFormat, source_ + ": " + what + " (pickle offset " + std::to_string(in_.offset()) + ")");
    }

    // Every value made is kept until the end, when their links are cut: a hostile pickle can make
    // a dict that holds itself, and shared pointers alone would never free it.
    Ref make(Value v) {
        all_.push_back(std::make_shared<Value>(std::move(v)));
        return all_.back();
    }
    Ref integer(int64_t i) {
        Value v;
        v.kind = Value::Kind::Int;
        v.integer = i;
        return make(std::move(v));
    }

    void push(Ref v) {
        if (stack_.size() >= kMaxStack) error("pickle stack deeper than " + std::to_string(kMaxStack));
        stack_.push_back(std::move(v));
    }
    Ref pop() {
        if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) error("pickle stack underflow");
        Ref v = std::move(stack_.back());
        stack_.pop_back();
        return v;
    }
    Ref& top() {
        if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) error("pickle stack underflow");
        return stack_.back();
    }
    // The values pushed since the last MARK, which is removed.
    std::vector<Ref> pop_mark() {
        if (marks_.empty()) error("pickle has no MARK to pop to");
        const size_t at = marks_.back();
        marks_.pop_back();
        std::vector<Ref> items(stack_.begin() + ptrdiff_t(at), stack_.end());
        stack_.resize(at);
        return items;
    }

    Ref text(uint64_t n) {
        Value v;
        v.kind = Value::Kind::Text;
        v.text = std::string(in_.read_bytes(n, "pickle string"));
        return make(std::move(v));
    }
    Ref tuple(std::vector<Ref> items) {
        Value v;
        v.kind = Value::Kind::Tuple;
        v.items = std::move(items);
        return make(std::move(v));
    }

    void memo_put(uint64_t index) {
        if (memo_.size() >= kMaxStack && !memo_.count(index)) error("pickle memo holds too many values");
        memo_[index] = top();
    }
    void memo_get(uint64_t index) {
        const auto it = memo_.find(index);
        if (it == memo_.end()) error("pickle refers to memo entry " + std::to_string(index) + ", which was never stored");
        push(it->second);
    }

    std::string line(const char* field) {
        std::string s;
        for (;;) {
            const char c = char(in_.read<uint8_t>(field));
            if (c == '\n') return s;
            if (s.size() >= 256) error("pickle GLOBAL name longer than 256 bytes");
            s += c;
        }
    }

    void global(const std::string& module, const std::string& name) {
        const std::string full = module + "." + name;
        bool allowed = false;
        for (const auto& [n, unused] : kStorages) allowed |= n == full;
        for (const std::string_view n : kCallables) allowed |= n == full;
        if (!allowed) {
            std::string printable;
            for (const char c : full) printable += (c >= 0x20 && c < 0x7f) ? c : '?';
            fail(ErrorCode::BadFormat, source_ + ": refusing pickle GLOBAL " + printable + ": only tensor data is read");
        }
        Value v;
        v.kind = Value::Kind::Global;
        v.text = full;
        push(make(std::move(v)));
    }

    static int64_t as_int(const Ref& v, const Unpickler& u, const char* what) {
        if (v->kind == Value::Kind::Int) return v->integer;
        if (v->kind == Value::Kind::Bool) return v->integer;
        u.error(std::string(what) + " is not an integer");
    }

    std::vector<int64_t> int_tuple(const Ref& v, const char* what) const {
        if (v->kind != Value::Kind::Tuple) error(std::string(what) + " is not a tuple");
        std::vector<int64_t> out;
        for (const Ref& i : v->items) out.push_back(as_int(i, *this, what));
        return out;
    }

    // ('storage', storage type, key, location, numel)
    Ref persistent(const Ref& pid) {
        const auto& p = pid->items;
        if (pid->kind != Value::Kind::Tuple || p.size() != 5 || p[0]->kind != Value::Kind::Text || p[0]->text != "storage" ||
            p[1]->kind != Value::Kind::Global || p[2]->kind != Value::Kind::Text)
            error("a persistent id that is not a torch storage");
        Value v;
        v.kind = Value::Kind::Storage;
        v.text = p[2]->text;
        v.numel = as_int(p[4], *this, "storage size");
        bool known = false;
        for (const auto& [n, dtype] : kStorages)
            if (n == p[1]->text) known = true, v.dtype = dtype;
        if (!known) error("storage type " + p[1]->text + " is not a tensor storage");
        if (v.numel < 0) error("negative storage size");
        return make(std::move(v));
    }

    Ref call(const Ref& callable, const Ref& args) {
        if (callable->kind != Value::Kind::Global || args->kind != Value::Kind::Tuple)
            error("REDUCE of something other than an allowed function");
        const auto& a = args->items;
        if (callable->text == "collections.OrderedDict") {
            if (!a.empty()) error("OrderedDict called with arguments");
            Value v;
            v.kind = Value::Kind::Dict;
            return make(std::move(v));
        }
        if (callable->text == "torch._utils._rebuild_parameter") {
            if (a.empty() || a[0]->kind != Value::Kind::Tensor) error("_rebuild_parameter without a tensor");
            return a[0];
        }
        if (callable->text == "torch._utils._rebuild_tensor_v2") {
            if (a.size() < 4 || a[0]->kind != Value::Kind::Storage) error("_rebuild_tensor_v2 needs (storage, offset, size, stride, ...)");
            Value v;
            v.kind = Value::Kind::Tensor;
            v.storage = a[0];
            v.offset = as_int(a[1], *this, "storage offset");
            v.shape = int_tuple(a[2], "tensor size");
            v.stride = int_tuple(a[3], "tensor stride");
            if (v.shape.size() != v.stride.size()) error("tensor size and stride differ in length");
            return make(std::move(v));
        }
        error("REDUCE of " + callable->text + " is not allowed");
    }

    void set_items(const Ref& dict, const std::vector<Ref>& kv) {
        if (dict->kind != Value::Kind::Dict) error("SETITEMS on something other than a dict");
        if (kv.size() % 2) error("SETITEMS with an odd number of values");
        for (size_t i = 0; i < kv.size(); i += 2) dict->pairs.emplace_back(kv[i], kv[i + 1]);
    }

    void step(uint8_t op) {
        switch (op) {
        case 0x80: {  // PROTO
            const uint8_t v = in_.read<uint8_t>("protocol");
            if (v > 5) error("pickle protocol " + std::to_string(v));
            return;
        }
        case 0x95: in_.skip(8, "frame size"); return;  // FRAME: a hint only
        case '(': marks_.push_back(stack_.size()); return;
        case '}': { Value v; v.kind = Value::Kind::Dict; return push(make(std::move(v))); }
        case ']': { Value v; v.kind = Value::Kind::List; return push(make(std::move(v))); }
        case ')': return push(tuple({}));
        case 'N': return push(make(Value{}));
        case 0x88: case 0x89: { Value v; v.kind = Value::Kind::Bool; v.integer = op == 0x88; return push(make(std::move(v))); }
        case 'K': return push(integer(in_.read<uint8_t>("BININT1")));
        case 'M': return push(integer(in_.read<uint16_t>("BININT2")));
        case 'J': return push(integer(in_.read<int32_t>("BININT")));
        case 0x8a: {  // LONG1
            const uint8_t n = in_.read<uint8_t>("LONG1 length");
            if (n > 8) error("an integer of " + std::to_string(n) + " bytes");
            const std::string_view b = in_.read_bytes(n, "LONG1");
            uint64_t u = 0;
            for (size_t i = 0; i < n; ++i) u |= uint64_t(uint8_t(b[i])) << (8 * i);
            if (n > 0 && n < 8 && (uint8_t(b[n - 1]) & 0x80)) u |= ~uint64_t(0) << (8 * n);  // sign-extend
            return push(integer(int64_t(u)));
        }
        case 'G': {  // BINFLOAT, big-endian
            const std::string_view b = in_.read_bytes(8, "BINFLOAT");
            uint64_t bits = 0;
            for (int i = 0; i < 8; ++i) bits = bits << 8 | uint8_t(b[size_t(i)]);
            Value v;
            v.kind = Value::Kind::Float;
            std::memcpy(&v.real, &bits, 8);
            return push(make(std::move(v)));
        }
        case 'X': return push(text(in_.read<uint32_t>("BINUNICODE length")));
        case 0x8c: return push(text(in_.read<uint8_t>("SHORT_BINUNICODE length")));
        case 0x8d: return push(text(in_.read<uint64_t>("BINUNICODE8 length")));
        case 'B': return push(text(in_.read<uint32_t>("BINBYTES length")));
        case 'C': return push(text(in_.read<uint8_t>("SHORT_BINBYTES length")));
        case 'T': return push(text(in_.read<uint32_t>("BINSTRING length")));
        case 'U': return push(text(in_.read<uint8_t>("SHORT_BINSTRING length")));
        case 'q': return memo_put(in_.read<uint8_t>("BINPUT index"));
        case 'r': return memo_put(in_.read<uint32_t>("LONG_BINPUT index"));
        case 0x94: return memo_put(memo_.size());  // MEMOIZE
        case 'h': return memo_get(in_.read<uint8_t>("BINGET index"));
        case 'j': return memo_get(in_.read<uint32_t>("LONG_BINGET index"));
        case 't': return push(tuple(pop_mark()));
        case 0x85: { Ref a = pop(); return push(tuple({a})); }
        case 0x86: { Ref b = pop(), a = pop(); return push(tuple({a, b})); }
        case 0x87: { Ref c = pop(), b = pop(), a = pop(); return push(tuple({a, b, c})); }
        case 'c': {
            const std::string module = line("GLOBAL module");
            return global(module, line("GLOBAL name"));
        }
        case 0x93: {  // STACK_GLOBAL
            const Ref name = pop(), module = pop();
            if (name->kind != Value::Kind::Text || module->kind != Value::Kind::Text) error("STACK_GLOBAL of non-strings");
            return global(module->text, name->text);
        }
        case 'Q': return push(persistent(pop()));
        case 'R': { Ref args = pop(), callable = pop(); return push(call(callable, args)); }
        case 's': { Ref v = pop(), k = pop(); return set_items(top(), {k, v}); }
        case 'u': { std::vector<Ref> kv = pop_mark(); return set_items(top(), kv); }
        case 'a': case 'e': {
            std::vector<Ref> items = op == 'a' ? std::vector<Ref>{pop()} : pop_mark();
            const Ref& list = top();
            if (list->kind != Value::Kind::List) error("APPEND to something other than a list");
            list->items.insert(list->items.end(), items.begin(), items.end());
            return;
        }
        default: {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02x", op);
            error(std::string("unsupported pickle opcode ") + hex);
        }
        }
    }

    ByteCursor in_;
    const std::string& source_;
    std::vector<Ref> stack_;
    std::vector<size_t> marks_;
    std::unordered_map<uint64_t, Ref> memo_;
    std::vector<Ref> all_;
};

}  // namespace

std::vector<PickledTensor> read_torch_state_dict(std::string_view pickle, const std::string& source) {
    Unpickler unpickler(pickle, source);
    const Ref root = unpickler.run();
    if (root->kind != Value::Kind::Dict) fail(ErrorCode::BadFormat, source + ": the pickle does not hold a dict of tensors");
    std::vector<PickledTensor> out;
    for (const auto& [key, value] : root->pairs) {
        if (key->kind != Value::Kind::Text) fail(ErrorCode::BadFormat, source + ": a state dict key is not a string");
        if (value->kind != Value::Kind::Tensor)
            fail(ErrorCode::BadFormat, source + ": state dict entry " + key->text.substr(0, 128) + " is not a tensor");
        PickledTensor t;
        t.name = key->text;
        t.storage_key = value->storage->text;
        t.dtype = value->storage->dtype;
        t.storage_numel = value->storage->numel;
        t.storage_offset = value->offset;
        t.shape = value->shape;
        t.stride = value->stride;
        out.push_back(std::move(t));
    }
    return out;
}

}  // namespace llamadesk
