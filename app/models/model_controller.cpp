#include "models/model_controller.h"

#include <QFileInfo>
#include <QUrl>
#include <utility>

#include "endpoint.h"
#include "llamadesk/builtin_model.h"
#include "models/process_memory.h"

using namespace llamadesk;

namespace {

QString local_path(const QString& pathOrUrl) {
    const QUrl url(pathOrUrl);
    return url.isLocalFile() ? url.toLocalFile() : pathOrUrl;
}

}  // namespace

ModelController::ModelController(AppSettings* settings, ApiKeyStore* keys, QObject* parent)
    : QObject(parent), settings_(settings), keys_(keys) {
    connect(settings_, &AppSettings::changed, this, &ModelController::recentChanged);
    // A mapped checkpoint becomes resident as it is read, so the figure grows after loading.
    resident_timer_.setInterval(2000);
    connect(&resident_timer_, &QTimer::timeout, this, &ModelController::refreshResidentBytes);
}

double ModelController::bytesPerParameter() const {
    return info_.n_params > 0 ? double(info_.weight_bytes) / double(info_.n_params) : 0.0;
}

void ModelController::refreshResidentBytes() {
    const qint64 bytes = process_resident_bytes();
    if (bytes == resident_bytes_) return;
    resident_bytes_ = bytes;
    emit residentBytesChanged();
}

QString ModelController::parameters() const {
    const double n = double(info_.n_params);
    if (n >= 1e9)
        return QString::number(n / 1e9, 'f', 1) + "B";
    if (n >= 1e6)
        return QString::number(n / 1e6, 'f', 0) + "M";
    return QString::number(n / 1e3, 'f', 0) + "K";
}

void ModelController::open(const QString& pathOrUrl) {
    const QString path = local_path(pathOrUrl);
    load(path, settings_->tokenizerFor(path));
}

void ModelController::openRemote(const QString& baseUrl, const QString& apiKey, const QString& model) {
    const remote::Endpoint endpoint{QUrl::fromUserInput(baseUrl.trimmed()), QString(), model};
    QString error = remote::check_base_url(endpoint.base_url);
    if (error.isEmpty() && model.isEmpty()) error = tr("choose one of the server's models");
    if (error.isEmpty()) {
        error = keys_->setKey(endpoint.base_url, apiKey);
        emit apiKeyStorageChanged();
    }
    if (!error.isEmpty()) {
        emit errorOccurred(tr("Could not use the server: %1").arg(error));
        return;
    }
    load(remote::remote_location(endpoint), QString());
}

QString ModelController::plainHttpWarning(const QString& baseUrl) const {
    return remote::plain_http_warning(QUrl::fromUserInput(baseUrl.trimmed()));
}

QString ModelController::displayName(const QString& location) const {
    if (!remote::is_remote_location(location)) return QFileInfo(location).fileName();
    const remote::Endpoint endpoint = remote::endpoint_from_location(location);
    return tr("%1 on %2").arg(endpoint.model, remote::host_and_port(endpoint.base_url));
}

bool ModelController::isRemote(const QString& location) const { return remote::is_remote_location(location); }

QString ModelController::serverAddress(const QString& location) const {
    return remote::endpoint_from_location(location).base_url.toString();
}

void ModelController::openWithTokenizer(const QString& pathOrUrl) {
    const QString model = std::exchange(tokenizer_for_, QString());
    emit needsTokenizerChanged();
    if (!model.isEmpty())
        load(model, local_path(pathOrUrl));
}

void ModelController::cancelTokenizer() {
    tokenizer_for_.clear();
    emit needsTokenizerChanged();
}

void ModelController::reload() {
    if (has_model_)
        open(path());
}

void ModelController::load(const QString& path, const QString& tokenizer) {
    if (path.isEmpty())
        return;
    ++loads_in_flight_;
    progress_ = 0;
    stage_ = tr("Opening %1").arg(displayName(path));
    emit loadingChanged();
    emit progressChanged();
    // The key is read here: QtKeychain serves one thread, and this is it.
    QString api_key;
    if (remote::is_remote_location(path)) {
        api_key = keys_->keyFor(remote::endpoint_from_location(path).base_url);
        emit apiKeyStorageChanged();
    }
    emit requestLoad(path, tokenizer, settings_->threads(), qint64(settings_->kvCacheMiB()) * 1024 * 1024,
                     settings_->kvCache(), settings_->contextLimit(), settings_->serverTimeoutSeconds() * 1000,
                     api_key);
}

void ModelController::onLoadProgress(double fraction, const QString& stage) {
    progress_ = fraction;
    stage_ = stage;
    emit progressChanged();
}

void ModelController::onModelLoaded(const QString& path, const QString& tokenizer, const ModelInfo& info) {
    info_ = info;
    has_model_ = true;
    settings_->rememberModel(path, tokenizer);
    emit modelChanged();
    if (!failure_.isEmpty() && path != fallback_) {
        emit failureAnswered(failure_);
        failure_.clear();
    }
    fallback_.clear();
    refreshResidentBytes();
    resident_timer_.start();
    finishOne();
}

void ModelController::onLoadFailed(const QString& path, int code, const QString& message) {
    if (ErrorCode(code) == ErrorCode::TokenizerMismatch) {
        tokenizer_for_ = path;
        tokenizer_message_ = message;
        emit needsTokenizerChanged();
        finishOne();
        return;
    }
    // With no model to keep (a bad --model at start), open the last good model, else the
    // built-in one, so the window always answers; the message stays up to say why.
    const QString fallback = has_model_ || loads_in_flight_ > 1 ? QString() : nextFallback(path);
    QString text = tr("Could not load %1: %2").arg(displayName(path), message);
    if (!text.endsWith('.'))
        text += '.';
    if (has_model_)
        text += tr(" Still using %1.").arg(name());
    else if (!fallback.isEmpty())
        text += tr(" Opening %1 instead.").arg(fallback == QString::fromStdString(builtin_model_path())
                                                   ? tr("the built-in model")
                                                   : displayName(fallback));
    failure_ = text;
    fallback_ = fallback;
    emit errorOccurred(text);
    finishOne();
    if (!fallback.isEmpty())
        load(fallback, settings_->tokenizerFor(fallback));
}

QString ModelController::nextFallback(const QString& failed) {
    const QString last = settings_->lastModel(), builtin = QString::fromStdString(builtin_model_path());
    for (const QString& candidate : {last, builtin}) {
        if (candidate.isEmpty() || candidate == failed || fallbacks_tried_.contains(candidate))
            continue;
        if (!QFileInfo::exists(candidate) && !remote::is_remote_location(candidate))
            continue;
        fallbacks_tried_.insert(candidate);  // each at most once, so two bad files never loop
        return candidate;
    }
    return QString();
}

void ModelController::finishOne() {
    loads_in_flight_ = qMax(0, loads_in_flight_ - 1);
    emit loadingChanged();
}

QString ModelController::name() const {
    if (builtin()) return tr("%1 (built in)").arg(QString::fromUtf8(kBuiltinModelName));
    return QString::fromStdString(info_.name);
}

bool ModelController::builtin() const {
    if (!has_model_) return false;
    const QString builtin_path = QString::fromStdString(builtin_model_path());
    return !builtin_path.isEmpty() &&
           QFileInfo(builtin_path).canonicalFilePath() == QFileInfo(path()).canonicalFilePath();
}

QStringList ModelController::suggestedQuestions() const {
    if (!builtin()) return {};
    return {tr("How do I start a new conversation?"), tr("What is a KV cache?"),
            tr("Why is a follow-up question fast?")};
}
