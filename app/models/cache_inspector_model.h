// The KV cache inspector: the current conversation's cache, one row per layer
// (blocks x block size x kv heads x head dim), with its dtype, device, bytes and block table
// (each block with the number of conversations holding it: more than one is a shared prefix).
// The worker publishes every conversation's layout whenever it changes (during an answer too);
// the last one of each is kept, so switching shows the truth at once.
#pragma once

#include <QAbstractListModel>
#include <QHash>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include <llamadesk/engine.h>

class CacheInspectorModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by AppContext")
    Q_PROPERTY(QString dtype READ dtype NOTIFY layoutChanged)
    Q_PROPERTY(QString device READ device NOTIFY layoutChanged)
    Q_PROPERTY(int blockSize READ blockSize NOTIFY layoutChanged)
    Q_PROPERTY(int blocks READ blocks NOTIFY layoutChanged)
    Q_PROPERTY(int kvHeads READ kvHeads NOTIFY layoutChanged)
    Q_PROPERTY(int headDim READ headDim NOTIFY layoutChanged)
    Q_PROPERTY(int cachedTokens READ cachedTokens NOTIFY layoutChanged)
    Q_PROPERTY(double bytesPerBlock READ bytesPerBlock NOTIFY layoutChanged)
    Q_PROPERTY(double bytesUsed READ bytesUsed NOTIFY layoutChanged)
    Q_PROPERTY(QVariantList blockTable READ blockTable NOTIFY layoutChanged)
    Q_PROPERTY(int sharedBlocks READ sharedBlocks NOTIFY layoutChanged)
    Q_PROPERTY(int restoredBlocks READ restoredBlocks NOTIFY layoutChanged)
public:
    enum Roles { LayerRole = Qt::UserRole + 1, ShapeRole, BytesRole };

    using QAbstractListModel::QAbstractListModel;
    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    QString dtype() const { return QString::fromStdString(layout_.dtype); }
    QString device() const { return QString::fromStdString(layout_.device); }
    int blockSize() const { return layout_.block_size; }
    int blocks() const { return int(layout_.block_table.size()); }
    int kvHeads() const { return layout_.n_kv_heads; }
    int headDim() const { return layout_.head_dim; }
    int cachedTokens() const { return layout_.cached_tokens; }
    double bytesPerBlock() const { return double(layout_.bytes_per_block); }
    double bytesUsed() const { return double(layout_.bytes_used); }
    QVariantList blockTable() const;  // {block, users} in position order
    int sharedBlocks() const;         // blocks this conversation shares with others
    int restoredBlocks() const;       // blocks read back from a KV snapshot on disk

    void setCurrentConversation(const QString& key);
    void forget(const QString& key);

public slots:
    void onCacheLayout(const QString& key, const llamadesk::CacheLayout& layout);

signals:
    void layoutChanged();

private:
    void showLayout(const llamadesk::CacheLayout& layout);

    QString current_;
    llamadesk::CacheLayout layout_;  // the current conversation's
    QHash<QString, llamadesk::CacheLayout> layouts_;
};
