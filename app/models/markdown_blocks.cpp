#include "models/markdown_blocks.h"

#include <QStringList>

namespace {

// A line that opens or closes a fenced code block, as CommonMark has it: up to three spaces, then
// three or more backticks or tildes.
struct Fence {
    QChar marker;  // null when the line is no fence
    int length = 0;
    int indent = 0;  // spaces before the markers, taken off the code's lines too
    QString info;    // what follows the markers
};

Fence fence_of(const QString& line) {
    int start = 0;
    while (start < line.size() && line[start] == u' ')
        ++start;
    if (start > 3 || start == line.size() || (line[start] != u'`' && line[start] != u'~'))
        return {};
    const QChar marker = line[start];
    int end = start;
    while (end < line.size() && line[end] == marker)
        ++end;
    const QString info = line.mid(end).trimmed();
    // A backtick in a backtick fence's info string makes the line inline code, not a fence.
    if (end - start < 3 || (marker == u'`' && info.contains(u'`')))
        return {};
    return {marker, end - start, start, info};
}

// Only a fence of the same marker, at least as long and with nothing after it closes a block, so
// a ``` line inside a ~~~ block (or ``` inside ````) is code.
bool closes(const Fence& fence, const Fence& opening) {
    return fence.marker == opening.marker && fence.length >= opening.length && fence.info.isEmpty();
}

QString without_indent(const QString& line, int indent) {
    int cut = 0;
    while (cut < indent && cut < line.size() && line[cut] == u' ')
        ++cut;
    return line.mid(cut);
}

void append_prose(QList<MarkdownBlock>& blocks, QStringList& lines) {
    const QString text = lines.join(u'\n');
    if (!text.trimmed().isEmpty())
        blocks.append({MarkdownBlock::Kind::Text, text, {}});
    lines.clear();
}

void append_code(QList<MarkdownBlock>& blocks, QStringList& lines, const Fence& opening) {
    blocks.append({MarkdownBlock::Kind::Code, lines.join(u'\n'), opening.info.section(u' ', 0, 0)});
    lines.clear();
}

}  // namespace

QList<MarkdownBlock> split_markdown_blocks(const QString& markdown) {
    QList<MarkdownBlock> blocks;
    QStringList lines;  // of the block being read
    Fence opening;      // of the code block being read; no marker while reading prose
    for (QString line : markdown.split(u'\n')) {
        if (line.endsWith(u'\r'))  // a server's CRLF line ends
            line.chop(1);
        const Fence fence = fence_of(line);
        if (opening.marker.isNull() && !fence.marker.isNull()) {
            append_prose(blocks, lines);
            opening = fence;
        } else if (!opening.marker.isNull() && closes(fence, opening)) {
            append_code(blocks, lines, opening);
            opening = {};
        } else {
            lines.append(opening.marker.isNull() ? line : without_indent(line, opening.indent));
        }
    }
    if (!opening.marker.isNull())  // still streaming, or cut short: the code so far
        append_code(blocks, lines, opening);
    append_prose(blocks, lines);
    return blocks;
}
