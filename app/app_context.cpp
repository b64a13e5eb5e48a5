#include "app_context.h"

#include <QCoreApplication>
#include <QStandardPaths>

AppPaths AppPaths::standard() {
    return {QStandardPaths::writableLocation(QStandardPaths::AppDataLocation), QString()};
}

AppContext::AppContext(const AppPaths& paths, QObject* parent)
    : QObject(parent),
      keys_(paths.data_dir + "/api-keys.json"),
      settings_(std::make_unique<AppSettings>(paths.settings_file)),
      conversations_(std::make_unique<ConversationList>(paths.data_dir, &settings_->store())),
      generation_(std::make_unique<Generation>(conversations_.get(), &cancel_)),
      composer_(std::make_unique<MessageComposer>(conversations_.get(), generation_.get())),
      format_(std::make_unique<ChatFormatChoice>(conversations_.get(), generation_.get())),
      appearance_(std::make_unique<Appearance>(&settings_->store())),
      search_(std::make_unique<ConversationSearch>(conversations_->model())),
      transfer_(std::make_unique<ConversationTransfer>(conversations_.get())),
      model_(std::make_unique<ModelController>(settings_.get(), &keys_)),
      figures_(std::make_unique<Figures>(conversations_->model())),
      inspector_(std::make_unique<CacheInspectorModel>()),
      worker_(std::make_unique<InferenceWorker>(&cancel_)),
      server_(std::make_unique<LocalServer>(worker_.get(), &cancel_, settings_.get(), &keys_)),
      library_(std::make_unique<ModelLibrary>(paths.data_dir, settings_.get(), &keys_)),
      saver_(std::make_unique<ConversationSaver>(paths.data_dir)),
      snapshot_dir_(paths.data_dir.isEmpty() ? QString() : paths.data_dir + "/kv-snapshots") {
    thread_.setObjectName("inference");
    worker_->moveToThread(&thread_);
    storage_thread_.setObjectName("storage");
    saver_->moveToThread(&storage_thread_);
    wire();
    thread_.start();
    storage_thread_.start();
}

void AppContext::applySnapshotSettings() {
    const qint64 budget = snapshot_dir_.isEmpty() ? 0 : qint64(settings_->kvSnapshotMiB()) * 1024 * 1024;
    if (budget == snapshot_budget_)
        return;
    snapshot_budget_ = budget;
    emit requestSnapshots(snapshot_dir_, budget);
}

AppContext::~AppContext() {
    server_.reset();     // its connections end first: nothing more comes in
    cancel_.raiseAll();  // answers in progress end at their next token
    thread_.quit();
    thread_.wait();
    // What the worker said last (the stopped answer's end) is delivered, so it is saved.
    QCoreApplication::sendPostedEvents(generation_.get());
    conversations_->shutdown();
    composer_->shutdown();
    generation_->shutdown();
    worker_.reset();      // its thread has finished: nothing else can touch it now
    // Saves already asked for are written before we go (this call queues behind them), and
    // those that failed get one last try.
    QMetaObject::invokeMethod(saver_.get(), &ConversationSaver::finish, Qt::BlockingQueuedConnection);
    storage_thread_.quit();
    storage_thread_.wait();
    saver_.reset();
}

void AppContext::wire() {
    InferenceWorker* w = worker_.get();
    ConversationList* list = conversations_.get();
    Generation* generation = generation_.get();
    MessageComposer* composer = composer_.get();
    ModelController* model = model_.get();
    const auto q = Qt::QueuedConnection;

    // Requests: GUI thread -> worker thread.
    connect(this, &AppContext::requestSnapshots, w, &InferenceWorker::setSnapshots, q);
    connect(model, &ModelController::requestLoad, w, &InferenceWorker::loadModel, q);
    connect(list, &ConversationList::requestRestore, w, &InferenceWorker::restoreConversation, q);
    connect(list, &ConversationList::requestFormat, w, &InferenceWorker::setChatFormat, q);
    connect(list, &ConversationList::requestDelete, w, &InferenceWorker::deleteConversation, q);
    connect(list, &ConversationList::requestPublish, w, &InferenceWorker::publish, q);
    connect(generation, &Generation::requestGenerate, w, &InferenceWorker::generate, q);
    connect(generation, &Generation::requestContinue, w, &InferenceWorker::continueAnswer, q);
    connect(generation, &Generation::requestReset, w, &InferenceWorker::resetConversation, q);
    connect(generation, &Generation::requestTruncate, w, &InferenceWorker::truncateTurns, q);
    connect(generation, &Generation::requestDropOldest, w, &InferenceWorker::dropOldestTurns, q);
    connect(composer, &MessageComposer::requestMeasure, w, &InferenceWorker::measureTurn, q);

    // Results: worker thread -> GUI thread.
    connect(w, &InferenceWorker::loadProgress, model, &ModelController::onLoadProgress, q);
    // The conversations and figures learn of a new model before the model controller tells
    // the window (modelChanged), so nothing reacting to that sees the old model's format.
    connect(w, &InferenceWorker::historiesCleared, list, &ConversationList::restoreAll, q);
    connect(w, &InferenceWorker::modelLoaded, list, &ConversationList::onModelLoaded, q);
    connect(w, &InferenceWorker::modelLoaded, figures_.get(), &Figures::onModelLoaded, q);
    connect(w, &InferenceWorker::modelLoaded, model, &ModelController::onModelLoaded, q);
    connect(w, &InferenceWorker::loadFailed, model, &ModelController::onLoadFailed, q);
    connect(w, &InferenceWorker::tokenGenerated, generation, &Generation::onTokenGenerated, q);
    connect(w, &InferenceWorker::generationFinished, generation, &Generation::onGenerationFinished, q);
    connect(w, &InferenceWorker::statsChanged, list, &ConversationList::onStatsChanged, q);
    connect(w, &InferenceWorker::turnMeasured, composer, &MessageComposer::onTurnMeasured, q);
    connect(w, &InferenceWorker::generationStarted, figures_.get(), &Figures::onGenerationStarted, q);
    connect(w, &InferenceWorker::tokenGenerated, figures_.get(), &Figures::onTokenGenerated, q);
    connect(w, &InferenceWorker::generationFinished, figures_.get(), &Figures::onGenerationFinished, q);
    connect(w, &InferenceWorker::statsChanged, figures_.get(), &Figures::onStatsChanged, q);
    connect(w, &InferenceWorker::serverFiguresChanged, figures_.get(), &Figures::onServerFigures, q);
    connect(w, &InferenceWorker::cacheLayoutReady, inspector_.get(), &CacheInspectorModel::onCacheLayout, q);
    connect(w, &InferenceWorker::error, this, [this](const QString&, const QString& m) { showError(m); }, q);

    connect(list, &ConversationList::saveRequested, saver_.get(), &ConversationSaver::save, q);
    connect(list, &ConversationList::removeRequested, saver_.get(), &ConversationSaver::remove, q);
    connect(saver_.get(), &ConversationSaver::saved, list, &ConversationList::onSaved, q);
    connect(saver_.get(), &ConversationSaver::failed, this, [this](const QString& m) {
        save_error_ = m;
        showError(m);
    }, q);
    connect(saver_.get(), &ConversationSaver::recovered, this, [this] {
        if (error_ == save_error_)
            dismissError();
        save_error_.clear();
    }, q);

    // GUI-thread bookkeeping.
    connect(list, &ConversationList::currentChanged, this, [this] {
        figures_->setCurrentConversation(conversations_->currentId());
        inspector_->setCurrentConversation(conversations_->currentId());
    });
    connect(list, &ConversationList::requestDelete, inspector_.get(), &CacheInspectorModel::forget);
    connect(list, &ConversationList::requestDelete, figures_.get(), &Figures::forget);
    // The local server's requests pass through the same worker signals; their figures go with them.
    connect(server_->service(), &llamadesk::server::ApiService::requestDelete, inspector_.get(),
            &CacheInspectorModel::forget);
    connect(server_->service(), &llamadesk::server::ApiService::requestDelete, figures_.get(), &Figures::forget);
    connect(list, &ConversationList::errorOccurred, this, &AppContext::showError);
    connect(generation, &Generation::errorOccurred, this, &AppContext::showError);
    connect(composer, &MessageComposer::errorOccurred, this, &AppContext::showError);
    connect(transfer_.get(), &ConversationTransfer::failed, this, &AppContext::showError);
    connect(model, &ModelController::errorOccurred, this, &AppContext::showError);
    connect(model, &ModelController::failureAnswered, this, [this](const QString& message) {
        if (error_ == message)
            dismissError();
    });
}

void AppContext::start(const QString& modelPath, const QString& tokenizer) {
    applySnapshotSettings();  // before the first load, so restored conversations find their caches
    connect(settings_.get(), &AppSettings::changed, this, &AppContext::applySnapshotSettings);
    composer_->setDropOldestWhenFull(settings_->dropOldestWhenFull());
    connect(settings_.get(), &AppSettings::changed, composer_.get(),
            [this] { composer_->setDropOldestWhenFull(settings_->dropOldestWhenFull()); });
    conversations_->loadSaved();
    server_->apply();  // on when it was on: it answers 503 until the model has loaded
    if (!modelPath.isEmpty())
        model_->load(modelPath, tokenizer.isEmpty() ? settings_->tokenizerFor(modelPath) : tokenizer);
}

void AppContext::showError(const QString& message) {
    error_ = message;
    emit errorChanged();
}

void AppContext::dismissError() { showError(QString()); }
