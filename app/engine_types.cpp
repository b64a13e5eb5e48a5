#include "engine_types.h"

#include "server_figures.h"

void register_engine_metatypes() {
    qRegisterMetaType<llamadesk::ModelInfo>();
    qRegisterMetaType<llamadesk::GenerateParams>();
    qRegisterMetaType<llamadesk::GenerationStats>();
    qRegisterMetaType<llamadesk::GenerationResult>();
    qRegisterMetaType<llamadesk::ConversationStats>();
    qRegisterMetaType<llamadesk::PoolStats>();
    qRegisterMetaType<llamadesk::CacheLayout>();
    qRegisterMetaType<llamadesk::TurnSize>();
    qRegisterMetaType<llamadesk::ChatFormat>();
    qRegisterMetaType<llamadesk::KvCacheType>();
    qRegisterMetaType<std::vector<llamadesk::ChatTurn>>();
    qRegisterMetaType<ServerFigures>();
}
