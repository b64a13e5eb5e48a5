// Engine structs that cross the thread boundary inside queued signals.
#pragma once

#include <QMetaType>
#include <vector>

#include <llamadesk/engine.h>

Q_DECLARE_METATYPE(llamadesk::ModelInfo)
Q_DECLARE_METATYPE(llamadesk::GenerateParams)
Q_DECLARE_METATYPE(llamadesk::GenerationStats)
Q_DECLARE_METATYPE(llamadesk::GenerationResult)
Q_DECLARE_METATYPE(llamadesk::ConversationStats)
Q_DECLARE_METATYPE(llamadesk::PoolStats)
Q_DECLARE_METATYPE(llamadesk::CacheLayout)
Q_DECLARE_METATYPE(llamadesk::TurnSize)
Q_DECLARE_METATYPE(llamadesk::ChatFormat)
Q_DECLARE_METATYPE(llamadesk::KvCacheType)
Q_DECLARE_METATYPE(std::vector<llamadesk::ChatTurn>)

// Registers the types above (and ServerFigures) for queued connections; call once before connecting.
void register_engine_metatypes();
