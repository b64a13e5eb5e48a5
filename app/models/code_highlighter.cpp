#include "models/code_highlighter.h"

#include <QList>
#include <QSet>
#include <QStringList>
#include <algorithm>

namespace {

// What the lexer needs to know of a language. Approximate on purpose: enough to colour an answer's
// snippet, not to parse it. Every member has an initializer, so the table below names only what a
// language has.
struct LanguageTraits {
    QString name{};         // as the code block's header shows it
    QStringList aliases{};  // the info strings that mean it, in lower case
    QSet<QString> keywords{};
    QSet<QString> types{};   // types, built-ins and literals such as true and None
    QString line_comment{};  // "//" or "#"; a "#" comment starts only at a word's start (shell's $#)
    QString block_comment_begin{}, block_comment_end{};
    QString quotes{};            // characters that open a string
    QString multiline_quotes{};  // those whose strings may run over several lines
    QString raw_quotes{};        // those in whose strings a backslash escapes nothing
    bool triple_quotes = false;    // Python's """ and ''' strings, which may span lines
    bool char_literals = false;    // ' opens only a one-character literal ('a', '\n'): Rust's 'a is a lifetime
    bool hash_directives = false;  // #include, #define: the preprocessor's lines start with a keyword
};

QSet<QString> words(const char* list) {
    const QStringList split = QString::fromLatin1(list).split(u' ', Qt::SkipEmptyParts);
    return {split.begin(), split.end()};
}

const char kCKeywords[] =
    "auto break case const continue default do else enum extern for goto if inline register restrict return "
    "sizeof static struct switch typedef union volatile while";
const char kCTypes[] =
    "void char short int long float double signed unsigned bool _Bool size_t ssize_t int8_t int16_t int32_t "
    "int64_t uint8_t uint16_t uint32_t uint64_t FILE NULL true false";
const char kCppKeywords[] =
    "alignas alignof and catch class concept consteval constexpr constinit const_cast co_await co_return "
    "co_yield decltype delete dynamic_cast explicit export final friend mutable namespace new noexcept not "
    "operator or override private protected public reinterpret_cast requires static_assert static_cast "
    "template this throw try typeid typename using virtual";
const char kCppTypes[] =
    "wchar_t char8_t char16_t char32_t nullptr std string string_view vector array map unordered_map "
    "unique_ptr shared_ptr optional";
const char kJsKeywords[] =
    "async await break case catch class const continue debugger default delete do else export extends "
    "finally for from function if import in instanceof let new of return static super switch this throw try "
    "typeof var void while with yield";
const char kJsTypes[] =
    "true false null undefined NaN Infinity Array Boolean Error JSON Map Math Number Object Promise Set "
    "String console document window";

const QList<LanguageTraits>& languages() {
    static const QList<LanguageTraits> table = {
        {.name = "C", .aliases = {"c", "h"}, .keywords = words(kCKeywords), .types = words(kCTypes),
         .line_comment = "//", .block_comment_begin = "/*", .block_comment_end = "*/", .quotes = "\"",
         .char_literals = true, .hash_directives = true},
        {.name = "C++", .aliases = {"cpp", "c++", "cxx", "cc", "hpp", "hxx"},
         .keywords = words(kCKeywords) + words(kCppKeywords), .types = words(kCTypes) + words(kCppTypes),
         .line_comment = "//", .block_comment_begin = "/*", .block_comment_end = "*/", .quotes = "\"",
         .char_literals = true, .hash_directives = true},
        {.name = "Python", .aliases = {"python", "py", "python3"},
         .keywords = words("and as assert async await break class continue def del elif else except finally "
                           "for from global if import in is lambda nonlocal not or pass raise return try "
                           "while with yield"),
         .types = words("None True False self cls int float str bool bytes list dict set tuple object "
                        "type range len print open super isinstance enumerate zip map filter sorted "
                        "Exception ValueError TypeError KeyError"),
         .line_comment = "#", .quotes = "\"'", .triple_quotes = true},
        {.name = "JavaScript", .aliases = {"javascript", "js", "jsx", "mjs"}, .keywords = words(kJsKeywords),
         .types = words(kJsTypes), .line_comment = "//", .block_comment_begin = "/*",
         .block_comment_end = "*/", .quotes = "\"'`", .multiline_quotes = "`"},
        {.name = "TypeScript", .aliases = {"typescript", "ts", "tsx"},
         .keywords = words(kJsKeywords) + words("abstract as declare enum implements interface keyof "
                                                "namespace private protected public readonly satisfies type"),
         .types = words(kJsTypes) + words("any unknown never string number boolean object symbol bigint "
                                          "Record Partial Readonly"),
         .line_comment = "//", .block_comment_begin = "/*", .block_comment_end = "*/", .quotes = "\"'`",
         .multiline_quotes = "`"},
        {.name = "Rust", .aliases = {"rust", "rs"},
         .keywords = words("as async await break const continue crate dyn else enum extern fn for if impl in "
                           "let loop match mod move mut pub ref return self static struct super trait type "
                           "unsafe use where while"),
         .types = words("Self bool char str String i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 "
                        "f64 Vec Option Result Box Some None Ok Err true false"),
         .line_comment = "//", .block_comment_begin = "/*", .block_comment_end = "*/", .quotes = "\"",
         .multiline_quotes = "\"", .char_literals = true},
        {.name = "Go", .aliases = {"go", "golang"},
         .keywords = words("break case chan const continue default defer else fallthrough for func go goto if "
                           "import interface map package range return select struct switch type var"),
         .types = words("bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune "
                        "string uint uint8 uint16 uint32 uint64 uintptr any true false nil iota append cap "
                        "close copy delete len make new panic print println recover"),
         .line_comment = "//", .block_comment_begin = "/*", .block_comment_end = "*/", .quotes = "\"`",
         .multiline_quotes = "`", .raw_quotes = "`", .char_literals = true},
        {.name = "Java", .aliases = {"java"},
         .keywords = words("abstract assert break case catch class continue default do else enum extends final "
                           "finally for if implements import instanceof interface native new package private "
                           "protected public record return static strictfp super switch synchronized this "
                           "throw throws transient try var volatile while yield"),
         .types = words("boolean byte char double float int long short void String Object Integer Long "
                        "Double Boolean List Map Set System true false null"),
         .line_comment = "//", .block_comment_begin = "/*", .block_comment_end = "*/", .quotes = "\"",
         .char_literals = true},
        {.name = "Shell", .aliases = {"sh", "bash", "shell", "zsh"},
         .keywords = words("if then else elif fi for while until do done case esac function in select return "
                           "break continue local export readonly declare"),
         .types = words("echo printf read cd pwd source exit set unset shift trap eval exec test true false "
                        "alias"),
         .line_comment = "#", .quotes = "\"'", .multiline_quotes = "\"'", .raw_quotes = "'"},
        {.name = "JSON", .aliases = {"json"}, .types = words("true false null"), .quotes = "\""},
    };
    return table;
}

const LanguageTraits* traits_of(const QString& language) {
    const QString alias = language.toLower();
    for (const LanguageTraits& traits : languages())
        if (traits.aliases.contains(alias))
            return &traits;
    return nullptr;
}

// A piece of code the lexer recognised: `length` characters from where it was asked.
struct Token {
    enum class Kind { Plain, Keyword, Type, String, Comment, Number };
    Kind kind = Kind::Plain;
    int length = 0;  // 0: nothing starts here; the character is plain text
};

int line_end(const QString& code, int from) {
    const int end = int(code.indexOf(u'\n', from));
    return end < 0 ? int(code.size()) : end;
}

// The length of a comment starting at `at`, or 0.
int comment_length(const QString& code, int at, const LanguageTraits& lang) {
    const QStringView rest = QStringView(code).mid(at);
    if (!lang.line_comment.isEmpty() && rest.startsWith(lang.line_comment)) {
        if (lang.line_comment == u"#" && at > 0 && !code[at - 1].isSpace())
            return 0;
        return line_end(code, at) - at;
    }
    if (!lang.block_comment_begin.isEmpty() && rest.startsWith(lang.block_comment_begin)) {
        const int end = int(code.indexOf(lang.block_comment_end, at + lang.block_comment_begin.size()));
        return end < 0 ? int(code.size()) - at : end + int(lang.block_comment_end.size()) - at;
    }
    return 0;
}

// The length of a preprocessor directive's "#word" starting at `at`, or 0.
int directive_length(const QString& code, int at, const LanguageTraits& lang) {
    if (!lang.hash_directives || code[at] != u'#')
        return 0;
    for (int i = at - 1; i >= 0 && code[i] != u'\n'; --i)
        if (!code[i].isSpace())
            return 0;  // a # inside a line
    int end = at + 1;
    while (end < code.size() && code[end].isLetter())
        ++end;
    return end - at;
}

// An escape ('\n', '\'', '\u{e9}') runs to the next quote on the line after the escaped character;
// 'a' is three characters; anything else is no literal.
int char_literal_length(const QString& code, int at) {
    if (at + 1 < code.size() && code[at + 1] == u'\\') {
        for (int i = at + 3; i < code.size() && code[i] != u'\n'; ++i)
            if (code[i] == u'\'')
                return i + 1 - at;
        return 0;
    }
    return at + 2 < code.size() && code[at + 2] == u'\'' ? 3 : 0;
}

// The length of a string starting at `at`, or 0. An unterminated string ends with its line, or
// with the code where strings of its quote may span lines.
int string_length(const QString& code, int at, const LanguageTraits& lang) {
    const QChar quote = code[at];
    if (lang.char_literals && quote == u'\'')
        return char_literal_length(code, at);
    if (!lang.quotes.contains(quote))
        return 0;
    const QString triple(3, quote);
    if (lang.triple_quotes && QStringView(code).mid(at).startsWith(triple)) {
        const int end = int(code.indexOf(triple, at + 3));
        return end < 0 ? int(code.size()) - at : end + 3 - at;
    }
    const bool raw = lang.raw_quotes.contains(quote);
    const bool multiline = lang.multiline_quotes.contains(quote);
    for (int i = at + 1; i < code.size(); ++i) {
        if (code[i] == u'\\' && !raw)
            ++i;
        else if (code[i] == quote)
            return i + 1 - at;
        else if (code[i] == u'\n' && !multiline)
            return i - at;
    }
    return int(code.size()) - at;
}

// 42, 3.14, 1e-9, 0xff, 10u, 1_000: a digit, then letters, digits, _ and dots, and a sign after an exponent.
int number_length(const QString& code, int at) {
    if (code[at] < u'0' || code[at] > u'9')
        return 0;
    int end = at + 1;
    while (end < code.size()) {
        const QChar c = code[end];
        const bool exponent_sign = (c == u'+' || c == u'-') && (code[end - 1] == u'e' || code[end - 1] == u'E');
        if (!c.isLetterOrNumber() && c != u'_' && c != u'.' && !exponent_sign)
            break;
        ++end;
    }
    return end - at;
}

int word_length(const QString& code, int at) {
    if (!code[at].isLetter() && code[at] != u'_')
        return 0;
    int end = at + 1;
    while (end < code.size() && (code[end].isLetterOrNumber() || code[end] == u'_'))
        ++end;
    return end - at;
}

// The token starting at `at`. A whole word is one token even when it is plain, so that the 2 of
// utf8 is no number and the if of elif no keyword.
Token token_at(const QString& code, int at, const LanguageTraits& lang) {
    if (const int n = comment_length(code, at, lang))
        return {Token::Kind::Comment, n};
    if (const int n = directive_length(code, at, lang))
        return {Token::Kind::Keyword, n};
    if (const int n = string_length(code, at, lang))
        return {Token::Kind::String, n};
    if (const int n = number_length(code, at))
        return {Token::Kind::Number, n};
    const int n = word_length(code, at);
    const QString word = code.mid(at, n);
    if (lang.keywords.contains(word))
        return {Token::Kind::Keyword, n};
    if (lang.types.contains(word))
        return {Token::Kind::Type, n};
    return {Token::Kind::Plain, n};
}

QColor colour_of(Token::Kind kind, const CodeColours& colours) {
    switch (kind) {
    case Token::Kind::Keyword: return colours.keyword;
    case Token::Kind::Type: return colours.type;
    case Token::Kind::String: return colours.string;
    case Token::Kind::Comment: return colours.comment;
    case Token::Kind::Number: return colours.number;
    case Token::Kind::Plain: break;
    }
    return {};
}

}  // namespace

CodeColours CodeColours::light() {
    return {QColor("#b5162b"), QColor("#6f42c1"), QColor("#0a6127"), QColor("#5c6370"), QColor("#0550ae")};
}

CodeColours CodeColours::dark() {
    return {QColor("#ff7b72"), QColor("#d2a8ff"), QColor("#a5d6a7"), QColor("#8b949e"), QColor("#79c0ff")};
}

QString highlight_code(const QString& code, const QString& language, const CodeColours& colours) {
    const LanguageTraits* lang = traits_of(language);
    if (!lang)
        return code.toHtmlEscaped();
    QString html;
    int plain = 0;  // where the text not yet written begins
    for (int at = 0; at < code.size();) {
        const Token token = token_at(code, at, *lang);
        if (token.kind != Token::Kind::Plain) {
            html += code.mid(plain, at - plain).toHtmlEscaped();
            html += QStringLiteral("<span style=\"color:%1\">%2</span>")
                        .arg(colour_of(token.kind, colours).name(), code.mid(at, token.length).toHtmlEscaped());
            plain = at + token.length;
        }
        at += std::max(token.length, 1);
    }
    return html + code.mid(plain).toHtmlEscaped();
}

QString language_display_name(const QString& language) {
    const LanguageTraits* lang = traits_of(language);
    return lang ? lang->name : language;
}
