#include "tokenizer_test_data.h"

#include <QFile>
#include <QList>
#include <QStringList>
#include <cstdio>

#include "tokenizer/tokenizer.h"

namespace llamadesk::test {

std::vector<VectorCase> read_vector_cases(const QString& inp_path, const QString& out_path) {
    QFile inp(inp_path), out(out_path);
    if (!inp.open(QIODevice::ReadOnly) || !out.open(QIODevice::ReadOnly)) return {};
    const std::string inputs = inp.readAll().toStdString();
    const QList<QByteArray> lines = out.readAll().split('\n');

    const std::string separator = "\n__ggml_vocab_test__\n";
    std::vector<VectorCase> cases;
    for (size_t start = 0; start < inputs.size();) {
        const size_t end = inputs.find(separator, start);
        if (end == std::string::npos) return {};
        cases.push_back({inputs.substr(start, end - start), {}});
        start = end + separator.size();
    }
    // .out ends with a newline, so split() yields one more (empty) element than cases.
    if (lines.size() != qsizetype(cases.size()) + 1 || !lines.back().isEmpty()) return {};
    for (size_t i = 0; i < cases.size(); ++i) {
        for (const QByteArray& id : lines[qsizetype(i)].split(' ')) {
            if (id.isEmpty()) continue;
            bool ok = false;
            cases[i].ids.push_back(id.toInt(&ok));
            if (!ok) return {};
        }
    }
    return cases;
}

QString vector_mismatches(const Tokenizer& tok, const std::vector<VectorCase>& cases) {
    const auto join = [](const std::vector<int>& ids) {
        QStringList parts;
        for (int id : ids) parts << QString::number(id);
        return parts.join(' ');
    };
    QString mismatches;
    for (size_t i = 0; i < cases.size(); ++i) {
        const std::vector<int> ids = tok.encode(cases[i].text, /*add_bos=*/false);
        if (ids != cases[i].ids)
            mismatches +=
                QStringLiteral("case %1 \"%2\": got [%3], expected [%4]\n")
                    .arg(i)
                    .arg(QString::fromStdString(cases[i].text), join(ids), join(cases[i].ids));
    }
    return mismatches;
}

EmbeddedVocab tiny_vocab() {
    EmbeddedVocab v;
    v.model = "llama";
    v.tokens = {"<unk>", "<s>", "</s>"};
    v.token_types = {2, 3, 3};
    char piece[8];
    for (int b = 0; b < 256; ++b) {
        std::snprintf(piece, sizeof piece, "<0x%02X>", b);
        v.tokens.push_back(piece);
        v.token_types.push_back(6);
    }
    for (const char* p : {"\xE2\x96\x81", "a", "b", "c", "ab",
                          "\xE2\x96\x81"
                          "ab",
                          "\xE2\x96\x81"
                          "c"}) {
        v.tokens.push_back(p);
        v.token_types.push_back(1);
    }
    v.scores.assign(v.tokens.size(), 0.0f);
    for (size_t i = 259; i < v.tokens.size(); ++i) v.scores[i] = -float(i - 259);
    return v;
}

EmbeddedVocab vocab_from_model_file(const std::string& path) {
    return Tokenizer::from_file(path)->vocabulary();
}

}  // namespace llamadesk::test
