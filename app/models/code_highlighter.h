// Code in an answer as highlighted HTML: keywords, types and built-ins, strings, comments and
// numbers of C, C++, Python, JavaScript, TypeScript, Rust, Go, Java, shell and JSON, each coloured
// with a span. A small rule-based lexer of our own, because Debian 12's KSyntaxHighlighting is
// built for Qt 5 only. Code in another language, or in none, comes out as plain escaped text.
#pragma once

#include <QColor>
#include <QString>

// The colours of the highlighted parts; the rest keeps the text colour of the view.
struct CodeColours {
    QColor keyword, type, string, comment, number;

    // Readable (contrast at least 4.5:1) on the light code background #f0f2f6.
    static CodeColours light();
    // Readable on a dark code background such as #1e2330.
    static CodeColours dark();
};

// The code's HTML, escaped, without a surrounding element: meant to go inside a <pre>.
// `language` is a fence's info string word ("py", "C++", "bash"), matched without case.
QString highlight_code(const QString& code, const QString& language, const CodeColours& colours);

// The language's usual name ("C++" for "cpp"), or `language` itself when it is not one we know.
QString language_display_name(const QString& language);
