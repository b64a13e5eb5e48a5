// The Hugging Face cache's layout, as huggingface_hub writes it (file_download.py), so that it,
// transformers and LlamaDesk find each other's downloads and no file is stored twice:
//   <cache>/models--<org>--<name>/blobs/<sha256>                      the file, named by its hash
//   <cache>/models--<org>--<name>/snapshots/<commit>/<path>            a relative link to the blob
//   <cache>/models--<org>--<name>/refs/main                            the commit main pointed at
// A download in progress is blobs/<sha256>.part, with blobs/<sha256>.part.json beside it: the
// ETag that guards its resume (If-Range) and where it came from.
#pragma once

#include <QString>

namespace llamadesk::library {

struct HubCacheEntry {
    QString repo_dir;  // <cache>/models--org--name
    QString blob;      // blobs/<sha256>
    QString part;      // blobs/<sha256>.part
    QString part_info; // blobs/<sha256>.part.json
    QString snapshot;  // snapshots/<commit>/<path>
};

HubCacheEntry hub_cache_entry(const QString& cache, const QString& repo, const QString& sha256,
                              const QString& commit, const QString& path);

// Links the snapshot's file to its blob (replacing an older link) and records the commit as
// refs/main. Empty, or what went wrong.
QString link_snapshot(const HubCacheEntry& entry, const QString& commit);

// The snapshot file of path at the commit refs/main names, when its blob is whole; else empty.
QString cached_file(const QString& cache, const QString& repo, const QString& path);

}  // namespace llamadesk::library
