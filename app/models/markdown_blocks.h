// An answer's Markdown cut into the pieces the chat view shows differently: prose, rendered as
// Markdown, and fenced code blocks (``` or ~~~), shown highlighted with a Copy button of their own.
// A fence not yet closed (the answer is still streaming, or was cut short) runs to the end.
// Indented code and fences nested in lists or quotes stay in the prose, for its renderer.
#pragma once

#include <QList>
#include <QString>

struct MarkdownBlock {
    enum class Kind { Text, Code };
    Kind kind = Kind::Text;
    QString text;      // the prose's Markdown, or the code without its fences
    QString language;  // a code block's info string's first word ("python"), empty when none
};

// The blocks in order; prose that is only blank lines is left out.
QList<MarkdownBlock> split_markdown_blocks(const QString& markdown);
