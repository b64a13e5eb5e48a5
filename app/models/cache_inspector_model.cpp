#include "models/cache_inspector_model.h"

#include <algorithm>

int CacheInspectorModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : layout_.n_layers;
}

QVariant CacheInspectorModel::data(const QModelIndex& index, int role) const {
    if (index.row() < 0 || index.row() >= rowCount())
        return {};
    switch (role) {
    case LayerRole: return index.row();
    case ShapeRole:
        // K and V of this layer: blocks x block size x kv heads x head dim
        return QString("K,V: %1 x %2 x %3 x %4")
            .arg(blocks()).arg(layout_.block_size).arg(layout_.n_kv_heads).arg(layout_.head_dim);
    case BytesRole:
        return layout_.n_layers > 0 ? double(layout_.bytes_used) / layout_.n_layers : 0.0;
    default: return {};
    }
}

QHash<int, QByteArray> CacheInspectorModel::roleNames() const {
    return {{LayerRole, "layerIndex"}, {ShapeRole, "shape"}, {BytesRole, "bytes"}};
}

QVariantList CacheInspectorModel::blockTable() const {
    QVariantList blocks;
    for (size_t i = 0; i < layout_.block_table.size(); ++i)
        blocks.append(QVariantMap{{"block", layout_.block_table[i]},
                                  {"users", i < layout_.block_users.size() ? layout_.block_users[i] : 1},
                                  {"restored", i < layout_.block_restored.size() && layout_.block_restored[i]}});
    return blocks;
}

int CacheInspectorModel::sharedBlocks() const {
    return int(std::count_if(layout_.block_users.begin(), layout_.block_users.end(), [](int n) { return n > 1; }));
}

int CacheInspectorModel::restoredBlocks() const {
    return int(std::count(layout_.block_restored.begin(), layout_.block_restored.end(), true));
}

void CacheInspectorModel::setCurrentConversation(const QString& key) {
    if (key == current_)
        return;
    current_ = key;
    showLayout(layouts_.value(key));
}

void CacheInspectorModel::forget(const QString& key) { layouts_.remove(key); }

void CacheInspectorModel::onCacheLayout(const QString& key, const llamadesk::CacheLayout& layout) {
    layouts_.insert(key, layout);
    if (key == current_)
        showLayout(layout);
}

void CacheInspectorModel::showLayout(const llamadesk::CacheLayout& layout) {
    beginResetModel();
    layout_ = layout;
    endResetModel();
    emit layoutChanged();
}
