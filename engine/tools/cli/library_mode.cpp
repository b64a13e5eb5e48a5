#include "library_mode.h"

#include <unistd.h>

#include <QCoreApplication>
#include <QNetworkAccessManager>
#include <QStandardPaths>
#include <QTimer>
#include <cstdio>

#include "file_download.h"
#include "interrupt.h"
#include "model_folders.h"
#include "model_scan.h"

namespace llamadesk::cli {

namespace {

using namespace llamadesk::library;

// The window's data folder, where its own models folder is.
QString data_folder() {
    QCoreApplication::setOrganizationName("LlamaDesk");
    QCoreApplication::setApplicationName("LlamaDesk");
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
}

}  // namespace

int run_list_models(const Options&, int argc, char** argv) {
    QCoreApplication app(argc, argv);
    const QList<LocalModel> models = scan_models(model_folders(own_models_folder(data_folder())), {});
    if (models.isEmpty()) std::fputs("No checkpoints found in the folders LlamaDesk looks in.\n", stderr);
    for (const LocalModel& m : models) {
        const QString what = m.openable ? QString::fromStdString(m.summary.weight_types) : "cannot open: " + m.reason;
        std::printf("%s\t%s\t%s\t%s\t%s\n", source_name(m.source).toUtf8().constData(), m.name.toUtf8().constData(),
                    size_text(m.size).toUtf8().constData(), what.toUtf8().constData(), m.path.toUtf8().constData());
    }
    return 0;
}

int run_download(const Options& o, int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QNetworkAccessManager network;
    FileDownload download(&network, hugging_face_cache(), QString::fromStdString(o.download_repo),
                          QString::fromStdString(o.download_file));
    const bool terminal = isatty(fileno(stderr));
    QString last_line;
    int status = 1;
    QObject::connect(&download, &FileDownload::changed, [&] {
        using S = FileDownload::State;
        QString line = download.message();
        if (download.state() == S::Downloading && download.total() > 0) {
            const double f = double(download.received()) / double(download.total());
            const int filled = int(f * 30);
            line = "[" + QString(filled, '#') + QString(30 - filled, ' ') + "] " + QString::number(int(f * 100)) +
                   "% " + size_text(download.received()) + " of " + size_text(download.total()) + "  " +
                   speed_text(download.bytesPerSecond()) + "  " + time_left_text(download.secondsLeft());
        }
        if (terminal) {
            std::fprintf(stderr, "\r\033[K%s", line.toUtf8().constData());
        } else if (download.state() != S::Failed && (download.state() != S::Downloading || !line.startsWith('['))) {
            // Not a terminal: a line per step, not per piece.
            if (line != last_line) std::fprintf(stderr, "%s\n", line.toUtf8().constData());
        }
        last_line = line;
        if (download.state() == S::Paused) {
            status = 75;
            app.quit();
        }
    });
    QObject::connect(&download, &FileDownload::finished, [&] {
        if (download.state() == FileDownload::State::Done) {
            status = 0;
            std::printf("%s\n", download.file().toUtf8().constData());
        }
        app.quit();
    });
    InterruptGuard interrupt;
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, [&] {
        if (!interrupt.flag()->load()) return;
        download.pause();
        std::fputs("\nstopped; the same command resumes the download\n", stderr);
        status = 130;
        app.quit();
    });
    poll.start(100);
    download.start();
    if (download.state() == FileDownload::State::Starting) app.exec();
    if (terminal) std::fputs("\n", stderr);
    if (status == 1 || status == 75) std::fprintf(stderr, "llamadesk-cli: %s\n", download.message().toUtf8().constData());
    return status;
}

}  // namespace llamadesk::cli
