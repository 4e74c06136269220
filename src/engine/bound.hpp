#pragma once
// What limits a piece of work: which side of its ridge it is on. Reports alone turn it into words
// (report/bound_text.hpp).
#include <string>

namespace ridgeline {

enum class Bound {
    compute,    // arithmetic at the kernel's efficiency
    memory,     // HBM traffic
    weights,    // HBM, streaming the weights (decode)
    kv_cache,   // HBM, reading the KV cache (decode)
    network,    // a link level's bandwidth
    latency,    // fixed per-kernel or per-message costs
    pipeline,   // pipeline stages waiting (the bubble)
    host_link,  // the host link (offloaded optimizer)
};

struct Limit {
    Bound bound = Bound::compute;
    std::string level;  // network: the link level whose bandwidth term is largest, as the topology names it
};

}  // namespace ridgeline
