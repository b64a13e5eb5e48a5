// The window's export and import: one conversation to Markdown or JSON, all of them to one JSON
// file, and a JSON export read back as new conversations with new ids (nothing already there is
// replaced); and a message's text to the clipboard.
// Rows are ConversationListModel rows. Every outcome is said: done() or failed() with the file.
#pragma once

#include <QObject>
#include <QUrl>
#include <QtQml/qqmlregistration.h>

#include "conversations/conversation_export.h"

class ConversationList;

class ConversationTransfer : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by AppContext")
public:
    explicit ConversationTransfer(ConversationList* list, QObject* parent = nullptr);

    Q_INVOKABLE bool exportMarkdown(int row, const QUrl& file);
    Q_INVOKABLE bool exportJson(int row, const QUrl& file);
    Q_INVOKABLE bool exportAll(const QUrl& file);
    // Returns how many conversations were added; 0 when the file was refused (failed() says why).
    Q_INVOKABLE int importFile(const QUrl& file);
    // A file name for a save dialog: the conversation's title without characters file systems
    // refuse; row -1 names the file of all conversations.
    Q_INVOKABLE QString suggestedName(int row, const QString& extension) const;
    // Where the export and import dialogs open: the documents folder, or the home folder where there
    // is none (a fresh account has no ~/Documents until something makes it).
    Q_INVOKABLE static QUrl startFolder();

    // The export dialog's path, as a person reads and edits it: the start folder and the name.
    Q_INVOKABLE QString suggestedPath(int row, const QString& extension) const;
    // The file a typed path means: "~" is the home folder, a relative path lies in the start folder,
    // a folder gets the suggested name, and a name without the extension gets it.
    Q_INVOKABLE QUrl targetOf(const QString& typed, int row, const QString& extension) const;
    // The typed path's file name in another folder (the export dialog's Folder… button).
    Q_INVOKABLE static QString inFolder(const QString& typed, const QUrl& folder);
    Q_INVOKABLE static bool exists(const QUrl& file);
    Q_INVOKABLE void copyText(const QString& text);

signals:
    void done(const QString& message);
    void failed(const QString& message);

private:
    ConversationExport exportOf(const ConversationRecord& c) const;
    bool write(const QUrl& file, const QByteArray& bytes, const QString& what);

    ConversationList* list_;
};
