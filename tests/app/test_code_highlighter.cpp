// Code blocks in answers: an answer's Markdown cut into prose and fenced code, and the code's
// highlighting (keywords, types, strings, comments, numbers) for each language, always escaped.
#include <QtTest>

#include "models/code_highlighter.h"
#include "models/markdown_blocks.h"

namespace {

const CodeColours kColours = CodeColours::light();

// `text` (as written in the code) coloured as `colour` in `html`.
bool coloured(const QString& html, const QColor& colour, const QString& text) {
    const QString span = QStringLiteral("<span style=\"color:%1\">%2</span>");
    return html.contains(span.arg(colour.name(), text.toHtmlEscaped()));
}

}  // namespace

#define VERIFY_COLOURED(html, colour, text) \
    QVERIFY2(coloured(html, colour, text), qPrintable(QString(text) + " in " + html))

class CodeHighlighterTest : public QObject {
    Q_OBJECT

private slots:
    void python() {
        const QString html = highlight_code("def area(r):\n    # pi times r squared\n    return 3.14 * r ** 2  "
                                            "# done\ns = \"it's\" + 'x'\ndoc = \"\"\"two\nlines\"\"\"\nx = None\n",
                                            "python", kColours);
        VERIFY_COLOURED(html, kColours.keyword, "def");
        VERIFY_COLOURED(html, kColours.keyword, "return");
        VERIFY_COLOURED(html, kColours.comment, "# pi times r squared");
        VERIFY_COLOURED(html, kColours.comment, "# done");
        VERIFY_COLOURED(html, kColours.number, "3.14");
        VERIFY_COLOURED(html, kColours.number, "2");
        VERIFY_COLOURED(html, kColours.string, "\"it's\"");
        VERIFY_COLOURED(html, kColours.string, "'x'");
        VERIFY_COLOURED(html, kColours.string, "\"\"\"two\nlines\"\"\"");
        VERIFY_COLOURED(html, kColours.type, "None");
        QVERIFY2(html.contains("def</span> area("), qPrintable(html));
    }

    void cpp() {
        const QString html = highlight_code("#include <cstdio>\nint main() {\n    /* a\n       b */\n"
                                            "    std::string s = \"say \\\"hi\\\"\"; char c = '\\n', b = '\\\\';\n"
                                            "    return 0x1F; // end\n}",
                                            "cpp", kColours);
        VERIFY_COLOURED(html, kColours.keyword, "#include");
        VERIFY_COLOURED(html, kColours.type, "int");
        VERIFY_COLOURED(html, kColours.type, "string");
        VERIFY_COLOURED(html, kColours.keyword, "return");
        VERIFY_COLOURED(html, kColours.comment, "/* a\n       b */");
        VERIFY_COLOURED(html, kColours.comment, "// end");
        VERIFY_COLOURED(html, kColours.string, "\"say \\\"hi\\\"\"");
        VERIFY_COLOURED(html, kColours.string, "'\\n'");
        VERIFY_COLOURED(html, kColours.string, "'\\\\'");
        VERIFY_COLOURED(html, kColours.number, "0x1F");
        QVERIFY2(html.contains("&lt;cstdio&gt;"), qPrintable(html));
    }

    void javascript() {
        const QString html = highlight_code("const n = 2.5e-3; // tiny\nlet t = `a\n${n}`;\nif (x === null) "
                                            "return 'q';",
                                            "js", kColours);
        VERIFY_COLOURED(html, kColours.keyword, "const");
        VERIFY_COLOURED(html, kColours.keyword, "let");
        VERIFY_COLOURED(html, kColours.keyword, "if");
        VERIFY_COLOURED(html, kColours.number, "2.5e-3");
        VERIFY_COLOURED(html, kColours.comment, "// tiny");
        VERIFY_COLOURED(html, kColours.string, "`a\n${n}`");  // template literals span lines
        VERIFY_COLOURED(html, kColours.string, "'q'");
        VERIFY_COLOURED(html, kColours.type, "null");
    }

    void typescriptAddsToJavascript() {
        const QString html = highlight_code("interface P { name: string }\nconst p: P = { name: 'a' };", "ts",
                                            kColours);
        VERIFY_COLOURED(html, kColours.keyword, "interface");
        VERIFY_COLOURED(html, kColours.keyword, "const");
        VERIFY_COLOURED(html, kColours.type, "string");
    }

    void rustLifetimesAreNoCharacters() {
        const QString html = highlight_code("fn first<'a>(s: &'a str) -> char {\n    let c = 'x'; // one\n"
                                            "    println!(\"{}\", 10u32);\n    c\n}",
                                            "rust", kColours);
        VERIFY_COLOURED(html, kColours.keyword, "fn");
        VERIFY_COLOURED(html, kColours.keyword, "let");
        VERIFY_COLOURED(html, kColours.type, "str");
        VERIFY_COLOURED(html, kColours.string, "'x'");
        VERIFY_COLOURED(html, kColours.string, "\"{}\"");
        VERIFY_COLOURED(html, kColours.number, "10u32");
        VERIFY_COLOURED(html, kColours.comment, "// one");
        QVERIFY2(html.contains("first&lt;'a&gt;(s: &amp;'a "), qPrintable(html));
    }

    void shell() {
        const QString html = highlight_code("# setup\nif [ -f \"$HOME/x\" ]; then\n  echo $# 'a\\' # end\nfi",
                                            "bash", kColours);
        VERIFY_COLOURED(html, kColours.comment, "# setup");
        VERIFY_COLOURED(html, kColours.keyword, "if");
        VERIFY_COLOURED(html, kColours.keyword, "then");
        VERIFY_COLOURED(html, kColours.keyword, "fi");
        VERIFY_COLOURED(html, kColours.type, "echo");
        VERIFY_COLOURED(html, kColours.string, "\"$HOME/x\"");
        VERIFY_COLOURED(html, kColours.string, "'a\\'");  // no escapes in single quotes
        VERIFY_COLOURED(html, kColours.comment, "# end");
        QVERIFY2(html.contains("$# "), qPrintable(html));  // $# is no comment
    }

    void json() {
        const QString html = highlight_code("{\"name\": \"a#b\", \"n\": -2.5, \"ok\": [true, null]}", "json", kColours);
        VERIFY_COLOURED(html, kColours.string, "\"name\"");
        VERIFY_COLOURED(html, kColours.string, "\"a#b\"");
        VERIFY_COLOURED(html, kColours.number, "2.5");
        VERIFY_COLOURED(html, kColours.type, "true");
        VERIFY_COLOURED(html, kColours.type, "null");
        QVERIFY2(!html.contains(kColours.comment.name()), qPrintable(html));
    }

    void goAndJava() {
        const QString go = highlight_code("func main() {\n\tr := `raw\\n`\n}", "golang", kColours);
        VERIFY_COLOURED(go, kColours.keyword, "func");
        VERIFY_COLOURED(go, kColours.string, "`raw\\n`");
        const QString java = highlight_code("public class A { String s = \"x\"; }", "java", kColours);
        VERIFY_COLOURED(java, kColours.keyword, "public");
        VERIFY_COLOURED(java, kColours.type, "String");
    }

    void wordsAreWholeWords() {
        const QString html = highlight_code("elif_count = utf8 + format_if", "python", kColours);
        QVERIFY2(!html.contains("<span"), qPrintable(html));
    }

    void codeIsEscaped() {
        const QString code = "if (a < b && c > d) s = \"</pre><script>x</script>\"; // <b>&amp;</b>";
        for (const QString& language : {"cpp", "python", "cobol", ""}) {
            const QString html = highlight_code(code, language, kColours);
            QVERIFY2(!html.contains("<script") && !html.contains("</pre") && !html.contains("<b>"),
                     qPrintable(html));
            QVERIFY2(html.contains("&lt;/pre&gt;&lt;script&gt;") && html.contains("&amp;&amp;") &&
                         html.contains("&amp;amp;"),
                     qPrintable(html));
        }
    }

    void unknownOrNoLanguageIsPlainText() {
        const QString code = "int x = 1; // <b>";
        QCOMPARE(highlight_code(code, "cobol", kColours), code.toHtmlEscaped());
        QCOMPARE(highlight_code(code, "", kColours), code.toHtmlEscaped());
        QCOMPARE(language_display_name("cobol"), QString("cobol"));
    }

    void aliases_data() {
        QTest::addColumn<QStringList>("aliases");
        QTest::addColumn<QString>("name");
        QTest::newRow("C++") << QStringList{"cpp", "c++", "cxx", "hpp", "CPP"} << "C++";
        QTest::newRow("Python") << QStringList{"python", "py", "python3", "Python"} << "Python";
        QTest::newRow("JavaScript") << QStringList{"javascript", "js"} << "JavaScript";
        QTest::newRow("TypeScript") << QStringList{"typescript", "ts"} << "TypeScript";
        QTest::newRow("Rust") << QStringList{"rust", "rs"} << "Rust";
        QTest::newRow("Go") << QStringList{"go", "golang"} << "Go";
        QTest::newRow("Shell") << QStringList{"sh", "bash", "shell", "zsh"} << "Shell";
        QTest::newRow("JSON") << QStringList{"json"} << "JSON";
    }

    void aliases() {
        QFETCH(QStringList, aliases);
        QFETCH(QString, name);
        const QString code = "if x: return \"s\" # c // c 1 true";
        const QString first = highlight_code(code, aliases[0], kColours);
        QVERIFY2(first.contains("<span"), qPrintable(first));
        for (const QString& alias : aliases) {
            QCOMPARE(highlight_code(code, alias, kColours), first);
            QCOMPARE(language_display_name(alias), name);
        }
    }

    void darkColoursDiffer() {
        const CodeColours dark = CodeColours::dark();
        const QString html = highlight_code("return 1", "c", dark);
        VERIFY_COLOURED(html, dark.keyword, "return");
        VERIFY_COLOURED(html, dark.number, "1");
        QVERIFY(dark.keyword != kColours.keyword && dark.comment != kColours.comment);
    }

    void proseCodeAndTextAfter() {
        const auto blocks = split_markdown_blocks("Here:\n\n```python\nprint(1)\n\nprint(2)\n```\n\nAnd **after**.");
        QCOMPARE(blocks.size(), 3);
        QCOMPARE(blocks[0].kind, MarkdownBlock::Kind::Text);
        QCOMPARE(blocks[0].text.trimmed(), QString("Here:"));
        QCOMPARE(blocks[1].kind, MarkdownBlock::Kind::Code);
        QCOMPARE(blocks[1].language, QString("python"));
        QCOMPARE(blocks[1].text, QString("print(1)\n\nprint(2)"));
        QCOMPARE(blocks[2].kind, MarkdownBlock::Kind::Text);
        QCOMPARE(blocks[2].text.trimmed(), QString("And **after**."));
    }

    void tildeFencesInfoStringsAndIndent() {
        const auto blocks = split_markdown_blocks("~~~~ rust title=x\nfn f() {}\n~~~~\n  ```\n  a\n    b\n  ```");
        QCOMPARE(blocks.size(), 2);
        QCOMPARE(blocks[0].language, QString("rust"));
        QCOMPARE(blocks[0].text, QString("fn f() {}"));
        QCOMPARE(blocks[1].language, QString());
        QCOMPARE(blocks[1].text, QString("a\n  b"));  // the fence's indent comes off the code
    }

    void otherFencesInsideCodeAreCode() {
        const auto blocks = split_markdown_blocks("~~~markdown\n```js\nx\n```\n~~~\n````\n```\n````");
        QCOMPARE(blocks.size(), 2);
        QCOMPARE(blocks[0].text, QString("```js\nx\n```"));
        QCOMPARE(blocks[1].text, QString("```"));
    }

    void unterminatedFenceIsCodeToTheEnd() {
        const auto blocks = split_markdown_blocks("Start:\n```cpp\nint main() {\n  return");
        QCOMPARE(blocks.size(), 2);
        QCOMPARE(blocks[1].kind, MarkdownBlock::Kind::Code);
        QCOMPARE(blocks[1].language, QString("cpp"));
        QCOMPARE(blocks[1].text, QString("int main() {\n  return"));
    }

    void whatIsNoFenceStaysProse() {
        for (const QString& text : {QString("    ```\n    indented code"), QString("``not a fence``"),
                                    QString("``` inline ` code ```"), QString("plain\n\n\n")}) {
            const auto blocks = split_markdown_blocks(text);
            QCOMPARE(blocks.size(), 1);
            QCOMPARE(blocks[0].kind, MarkdownBlock::Kind::Text);
        }
        QVERIFY(split_markdown_blocks("").isEmpty());
    }
};

QTEST_APPLESS_MAIN(CodeHighlighterTest)

#include "test_code_highlighter.moc"
