// The YAML loader's alias rules, as kubectl's decoder (go-yaml v2 decode.go)
// applies them, and every reader of YAML going through it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>

#include "core/base/errors.h"
#include "core/codec/documents.h"
#include "core/codec/yaml_load.h"
#include "core/gpu_operator/operands.h"
#include "core/scenario/scenario.h"

using namespace gpuops;

namespace {

// `a: &a [s1 .. s199]` (an anchored node of 200 nodes: the sequence and its
// 199 scalars), then `r:` a sequence of `aliases` aliases of it.
std::string aliased_list(int aliases) {
  std::string t = "a: &a [";
  for (int i = 1; i <= 199; ++i) t += (i > 1 ? ",s" : "s") + std::to_string(i);
  t += "]\nr: [";
  for (int i = 0; i < aliases; ++i) t += i ? ",*a" : "*a";
  return t + "]\n";
}

// The classic expansion: nine levels of ten aliases each (10^9 leaves).
std::string billion_laughs() {
  std::string t = "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol,lol]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    std::string prev(1, static_cast<char>(c - 1));
    t += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) t += (i ? ",*" : "*") + prev;
    t += "]\n";
  }
  return t;
}

core::InputError refused(const std::string& text) {
  try {
    core::load_yaml_all(text, "f.yaml");
  } catch (const core::InputError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << text.substr(0, 80);
  return core::InputError("", 0, "", "");
}

}  // namespace

// go-yaml's own test table (decode_test.go, unmarshalErrorTests) has
// `a: &a\n  b: *a\n` -> "anchor 'a' value contains itself".
// YAML 1.1/1.2's escapes \N (U+0085) and \_ (U+00A0) are characters, which
// go-yaml writes as UTF-8 (C2 85, C2 A0); yaml-cpp 0.7 wrote the lone bytes
// 0x85 and 0xA0, not UTF-8 (found by a hostile-input run: a --junit report
// expat refused). \L and \P, and \x85 written out, were UTF-8 already.
TEST(YamlLoad, NextLineAndNoBreakSpaceEscapesAreUtf8) {
  YAML::Node n = core::load_yaml("a: \"x\\Ny\\_z\\Lw\\P\\x85\"\n\"k\\N\": v\n", "f.yaml");
  EXPECT_EQ(n["a"].Scalar(), "x\u0085y\u00a0z\u2028w\u2029\u0085");
  EXPECT_EQ(n["k\u0085"].Scalar(), "v");
  // Characters around them are kept whole.
  EXPECT_EQ(core::load_yaml("a: \"\u00e9\\N\u00e9\\_\U0001F600\"\n", "f.yaml")["a"].Scalar(),
            "\u00e9\u0085\u00e9\u00a0\U0001F600");
}

// yaml-cpp refuses about 500 collections inside one another with "bad file",
// marked past the end of a one-line text. The error says what it is, on the
// text's own line, and how to read the object (as JSON, up to Go's 10000).
TEST(YamlLoad, NestingTooDeepIsSaidPlainly) {
  const std::string deep = "a: " + std::string(500, '[') + std::string(500, ']');
  for (const std::string& text : {deep, deep + "\n"}) {
    try {
      core::load_yaml(text, "deep.yaml");
      FAIL() << "accepted";
    } catch (const core::InputError& e) {
      EXPECT_EQ(e.line(), 1);
      EXPECT_NE(e.message().find("nested too deep: gpuops reads YAML up to about 500 collections inside one another"),
                std::string::npos)
          << e.message();
      EXPECT_EQ(e.message().find("bad file"), std::string::npos) << e.message();
    }
  }
  // 400 levels are read.
  EXPECT_NO_THROW(core::load_yaml("a: " + std::string(400, '[') + std::string(400, ']'), "ok.yaml"));
}

TEST(YamlLoad, AliasInsideItsOwnAnchorIsRefused) {
  auto e = refused("a: &a\n  b: *a\n");
  EXPECT_EQ(e.message(), "invalid YAML: anchor 'a' value contains itself");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.file(), "f.yaml");
  e = refused("kind: List\nitems: &a [*a]\n");
  EXPECT_EQ(e.message(), "invalid YAML: anchor 'a' value contains itself");
  EXPECT_EQ(e.line(), 2);
  // Nested deeper, and in the second document of a stream.
  e = refused("x: 1\n---\nspec: &top\n  template:\n    again: [1, *top]\n");
  EXPECT_EQ(e.message(), "invalid YAML: anchor 'top' value contains itself");
  EXPECT_EQ(e.line(), 5);
}

TEST(YamlLoad, AnAliasOfAClosedAnchorIsFine) {
  auto docs = core::load_yaml_all("a: &a {x: 1}\nb: *a\nc: [*a, *a]\n", "f.yaml");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0]["b"]["x"].as<int>(), 1);
  EXPECT_EQ(docs[0]["c"][1]["x"].as<int>(), 1);
  // An anchor defined again takes the new value for later aliases.
  docs = core::load_yaml_all("a: &n 1\nb: &n 2\nc: *n\n", "f.yaml");
  EXPECT_EQ(docs[0]["c"].as<int>(), 2);
}

// decoder.unmarshal: the document node, the top map, key "a", the anchored
// sequence (200 nodes), key "r" and its sequence make 205 nodes; each alias
// adds itself and the 200 nodes it names, which count as aliased. After k
// aliases: decoded = 205 + 201k, aliased = 200k, refused when
// aliased/decoded > 0.99 (allowedAliasRatio below 400,000 decoded), that is
// when 1.01k > 202.95: k = 200 passes, k = 201 is refused.
TEST(YamlLoad, AliasBudgetIsGoYamls) {
  EXPECT_NO_THROW(core::load_yaml_all(aliased_list(200), "f.yaml"));
  auto e = refused(aliased_list(201));
  EXPECT_EQ(e.message(), "invalid YAML: document contains excessive aliasing");
  EXPECT_EQ(e.line(), 2);
}

TEST(YamlLoad, BillionLaughsIsRefusedBeforeAnyExpansion) {
  auto e = refused(billion_laughs());
  EXPECT_EQ(e.message(), "invalid YAML: document contains excessive aliasing");
  // Three levels (1,000 leaves) is ordinary use: decoded 1,000-odd nodes,
  // aliased share under 99%.
  std::string small =
      "a: &a [l,l,l,l,l,l,l,l,l,l]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
      "c: [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n";
  EXPECT_NO_THROW(core::load_yaml_all(small, "f.yaml"));
}

TEST(YamlLoad, TheBudgetIsPerDocument) {
  // Each document alone is within the budget; kubectl decodes each alone.
  std::string two = aliased_list(200) + "---\n" + aliased_list(200);
  EXPECT_EQ(core::load_yaml_all(two, "f.yaml").size(), 2u);
}

TEST(YamlLoad, SyntaxErrorsKeepTheirLineAndPrefix) {
  try {
    core::load_yaml("a:\n\tb: 1\n", "k.yaml", "cannot parse kubeconfig: ");
    FAIL() << "accepted";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.message(), "cannot parse kubeconfig: found a tab character in indentation (YAML allows spaces only)");
    EXPECT_EQ(e.line(), 2);
  }
}

// Every reader of YAML refuses the self-referential alias with an input
// error (exit 2) instead of recursing until the stack runs out.
TEST(YamlLoad, EveryReaderGoesThroughIt) {
  const std::string loop = "apiVersion: v1\nkind: Namespace\nmetadata: &m\n  name: x\n  labels: *m\n";
  EXPECT_THROW(core::read_documents(loop, "m.yaml"), core::InputError);
  EXPECT_THROW(core::parse_catalog("operands: &o [*o]\n", "c.yaml"), core::InputError);
  auto dir = std::filesystem::temp_directory_path() / ("gpuops-yaml-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "s.yaml") << "name: &n [*n]\ncluster: {}\nsteps: []\n";
  EXPECT_THROW(core::load_scenario((dir / "s.yaml").string()), core::InputError);
  std::ofstream(dir / "laughs.yaml") << billion_laughs();
  EXPECT_THROW(core::read_paths({(dir / "laughs.yaml").string()}), core::InputError);
  std::filesystem::remove_all(dir);
}

// Merge keys as go-yaml resolves them (decoder.merge; the YAML merge key
// type): own keys win, then earlier merged mappings over later ones.
TEST(YamlLoad, MergeKeysAreResolved) {
  auto docs = core::read_documents(
      "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: m\n  annotations: &b {app: driver, tier: gpu}\n"
      "  labels:\n    <<: [*b, {tier: other, team: x}]\n    app: mine\n",
      "m.yaml");
  ASSERT_EQ(docs.size(), 1u);
  const auto& labels = docs[0].value.at("metadata").at("labels").as_object();
  EXPECT_EQ(labels.size(), 3u);
  EXPECT_EQ(labels.at("app").as_string(), "mine");  // own key wins
  EXPECT_EQ(labels.at("tier").as_string(), "gpu");  // the earlier mapping wins
  EXPECT_EQ(labels.at("team").as_string(), "x");
  EXPECT_FALSE(labels.contains("<<"));
  // A quoted "<<" is an ordinary key.
  auto q = core::load_yaml("\"<<\": {a: 1}\n", "q.yaml");
  EXPECT_EQ(q["<<"]["a"].as<int>(), 1);
  auto e = refused("a: {<<: 3}\n");
  EXPECT_EQ(e.message(), "invalid YAML: map merge requires map or sequence of maps as the value");
  EXPECT_EQ(e.line(), 1);
  e = refused("a:\n  <<: [{x: 1}, 2]\n");
  EXPECT_EQ(e.line(), 2);
}

// readerc.go: only the characters YAML allows, in valid UTF-8; a BOM is read
// over.
TEST(YamlLoad, CharactersAsGoYamlReadsThem) {
  auto docs = core::load_yaml_all(
      "\xef\xbb\xbf"
      "a: 1\n",
      "bom.yaml");
  EXPECT_EQ(docs.at(0)["a"].as<int>(), 1);
  auto e = refused(std::string("a: 1\nb: x\0y\n", 12));
  EXPECT_EQ(e.message(), "invalid YAML: control characters are not allowed");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(refused("a: \x1b[31m\n").message(), "invalid YAML: control characters are not allowed");
  EXPECT_EQ(refused("a: \xff\n").message(), "invalid YAML: invalid leading UTF-8 octet");
  EXPECT_EQ(refused("a: \xc3\n").message(), "invalid YAML: invalid trailing UTF-8 octet");
  EXPECT_EQ(refused("a: \xe2\x82").message(), "invalid YAML: incomplete UTF-8 octet sequence");
  EXPECT_EQ(refused("a: \xc0\xaf\n").message(), "invalid YAML: invalid length of a UTF-8 sequence");
  EXPECT_EQ(refused("a: \xed\xa0\x80\n").message(), "invalid YAML: invalid Unicode character");
  EXPECT_NO_THROW(core::load_yaml_all("a: caf\xc3\xa9 \xf0\x9f\x98\x80\tb\r\n", "u.yaml"));
}

// A ',' where a document's node should start: yaml-cpp 0.7's LoadAll starts
// one empty document after another at it, for ever (found by
// fuzz/fuzz_manifest; fuzz/regressions/manifest/). Refused instead, with
// go-yaml's message, by every reader.
TEST(YamlLoad, ACommaWhereANodeShouldStartIsRefusedNotLoopedOn) {
  auto e = refused(",");
  EXPECT_EQ(e.message(), "invalid YAML: did not find expected node content");
  EXPECT_EQ(e.line(), 1);
  e = refused("a: 1\n...\n,\n");
  EXPECT_EQ(e.message(), "invalid YAML: did not find expected node content");
  EXPECT_EQ(e.line(), 3);
  EXPECT_THROW(core::load_yaml(",", "f.yaml"), core::InputError);
  EXPECT_THROW(core::read_documents("kind: Namespace\n---\n,\n", "m.yaml"), core::InputError);
  // Commas elsewhere are as before.
  EXPECT_EQ(core::load_yaml_all("a: [1, 2]\n---\nb: {c: d, e: f}\n", "f.yaml").size(), 2u);
  EXPECT_EQ(core::load_yaml("a: x, y\n", "f.yaml")["a"].as<std::string>(), "x, y");
}

namespace {

// Every property of a node callers read, recursively (marks included).
void expect_same_tree(const YAML::Node& got, const YAML::Node& want, const std::string& where, int depth = 0) {
  ASSERT_LT(depth, 200) << where;
  ASSERT_EQ(got.Type(), want.Type()) << where;
  EXPECT_EQ(got.Tag(), want.Tag()) << where;
  EXPECT_EQ(got.Style(), want.Style()) << where;
  EXPECT_EQ(got.Mark().pos, want.Mark().pos) << where;
  EXPECT_EQ(got.Mark().line, want.Mark().line) << where;
  EXPECT_EQ(got.Mark().column, want.Mark().column) << where;
  if (got.IsScalar()) {
    EXPECT_EQ(got.Scalar(), want.Scalar()) << where;
  }
  if (!got.IsSequence() && !got.IsMap()) return;
  ASSERT_EQ(got.size(), want.size()) << where;
  auto g = got.begin();
  auto w = want.begin();
  for (size_t i = 0; g != got.end(); ++g, ++w, ++i) {
    std::string at = where + "/" + std::to_string(i);
    if (got.IsSequence()) {
      expect_same_tree(*g, *w, at, depth + 1);
    } else {
      expect_same_tree(g->first, w->first, at + "(key)", depth + 1);
      expect_same_tree(g->second, w->second, at, depth + 1);
    }
  }
}

void expect_loads_as_yaml_cpp(const std::string& text, const std::string& name) {
  std::vector<YAML::Node> got;
  try {
    got = core::load_yaml_all(text, name);
  } catch (const core::InputError&) {
    return;  // refused: the other tests say what and how
  }
  std::vector<YAML::Node> want = YAML::LoadAll(text);
  ASSERT_EQ(got.size(), want.size()) << name;
  for (size_t i = 0; i < got.size(); ++i) {
    expect_same_tree(got[i], want[i], name + " document " + std::to_string(i));
    // Shared (aliased) nodes are shared alike: the emitter names them.
    EXPECT_EQ(YAML::Dump(got[i]), YAML::Dump(want[i])) << name;
  }
  YAML::Node first = core::load_yaml(text, name);
  std::string want_first = want.empty() ? YAML::Dump(YAML::Node()) : YAML::Dump(want[0]);
  EXPECT_EQ(YAML::Dump(first), want_first) << name;
}

}  // namespace

// The loader builds the nodes itself in the pass that checks the aliases
// (BuildingBudget, as yaml-cpp's NodeBuilder); they are what YAML::LoadAll
// builds, marks, tags, styles and shared aliases included, for every YAML
// file of the tree and every fuzz seed and regression (those without merge
// keys, which the loader resolves on top).
TEST(YamlLoad, BuildsTheNodesYamlCppBuilds) {
  namespace fs = std::filesystem;
  const std::vector<std::string> snippets = {
      "",
      "# only a comment\n",
      "---\n---\na: 1\n...\n",
      "a: &x {b: [1, 2, ~, null, \"q\", 'r', !!str 3, !t u]}\nc: *x\nd: [*x, *x]\n",
      "- &s scalar\n- *s\n- ? complex\n  : key\n- {? a, b: }\n",
      "text: |\n  line 1\n  line 2\nfolded: >-\n  a\n  b\nempty:\n",
      "a: x, y\nb: [1, 2]\n---\nc: {d: e, f: g}\n",
      "%YAML 1.2\n---\n!!map {a: !!seq [b]}\n",
  };
  size_t i = 0;
  for (const auto& s : snippets) expect_loads_as_yaml_cpp(s, "snippet " + std::to_string(i++));
  size_t files = 0;
  for (const char* dir : {"scenarios", "manifests", "data", "deploy", "fuzz/corpus", "fuzz/regressions"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(GPUOPS_SOURCE_DIR) / dir)) {
      if (!entry.is_regular_file() || entry.file_size() > (1 << 20)) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (text.find("<<") != std::string::npos) continue;
      expect_loads_as_yaml_cpp(text, entry.path().string());
      ++files;
    }
  }
  EXPECT_GT(files, 100u);
}

namespace {

// What the libfyaml reader builds for `text` (nullopt: left to yaml-cpp),
// checked against YAML::LoadAll when it builds anything.
bool read_by_libfyaml(const std::string& text) {
  std::optional<std::vector<YAML::Node>> got = core::detail::load_yaml_all_by_libfyaml(text);
  if (!got) return false;
  std::vector<YAML::Node> want = YAML::LoadAll(text);
  EXPECT_EQ(got->size(), want.size()) << text;
  for (size_t i = 0; i < std::min(got->size(), want.size()); ++i)
    expect_same_tree((*got)[i], want[i], text.substr(0, 60) + " document " + std::to_string(i));
  return true;
}

// A text of `nodes` scenario-like nodes (block maps, an indentless sequence,
// flow maps, quoted and plain scalars, nulls), over 256 KiB from about 600.
std::string large_text(int nodes) {
  std::string t = "# nodes\nname: large\nnodes:\n";
  for (int i = 0; i < nodes; ++i) {
    std::string n = std::to_string(i);
    t += "- name: gpu-" + n +
         "\n  labels:\n    nvidia.com/gpu.present: \"true\"\n"
         "    nvidia.com/gpu.deploy.driver: 'true'\n    kernel: 5.15.0-" +
         n +
         "-generic\n"
         "    empty: ~\n  allocatable: {cpu: \"8\", memory: 32Gi, nvidia.com/gpu: \"1\"}\n  taints: []\n";
  }
  return t + "steps:\n- apply: [a, b]\n---\nsecond: document\n";
}

}  // namespace

// The libfyaml reader (texts of 256 KiB and more) builds what yaml-cpp builds
// whenever it reads a text, and leaves to yaml-cpp every text outside the
// subset where the two parsers agree. Expected nodes: YAML::LoadAll's.
TEST(YamlLoad, LibfyamlBuildsWhatYamlCppBuilds) {
  namespace fs = std::filesystem;
  // In the subset: read by libfyaml, the same nodes.
  for (const std::string& s : std::vector<std::string>{
           "a: 1\n",
           "a: {b: c, d: [1, 2, 3]}\nl:\n- x\n- y: z\n  w: v\n- - nested\n  - seq\n",
           "\"quoted key\": 'single ''quoted'' value'\nplain: a b  c # comment\n",
           "n1: ~\nn2: null\nn3: Null\nn4: NULL\nnot: nil\ns: \"null\"\n",
           "---\na: 1\n---\n- b\n---\nc\n",
           "{\"json\": [1, 2.5, true, \"x\"], \"o\": {\"k\": \"v\"}}\n",
           "{\"compact\":[1,2],\"o\":{\"k\":\"v\"},\"n\":1}\n",
           "a: [b, c, ]\nd: {e: f, }\n",
           "k: x, y\nurl: http://example.com:8080/a?b=c\nflow: {k: \"a?b\"}\n",
           "list: [\n  a,\n  b\n  ]\n",
           "empty: []\nalso: {}\nq: ''\nd: \"\"\n",
           large_text(2),
       })
    EXPECT_TRUE(read_by_libfyaml(s)) << s;
  // Outside it: left to yaml-cpp (its nodes and errors stay yaml-cpp's).
  for (const std::string& s : std::vector<std::string>{
           "a: &x 1\nb: *x\n",        // anchors, aliases
           "a: !!str 1\n",            // tags
           "%YAML 1.2\n---\na: 1\n",  // directives
           "? a\n: b\n",              // explicit keys
           "a:\nb: 1\n",              // an empty node
           "a: |\n  x\n",             // block scalars
           "a: >\n  x\n",             //
           "a: b\n  c\n",             // a multi-line plain scalar
           "a: \"b\n  c\"\n",         // a multi-line quoted one
           "a: \"tab\\there\"\n",     // escapes
           "a:\tb\n",                 // tabs
           "a: b\r\n",                // CR
           "a: caf\xc3\xa9\n",        // non-ASCII
           "\xef\xbb\xbf"
           "a: b\n",                          // a byte order mark
           "[a: b]\n",                        // an implicit pair in a flow sequence
           "a: [b\n",                         // refused by libfyaml
           "a: b: c\n",                       //
           ",",                               // yaml-cpp issue 1040's stream
           "list: [\n  a\n]\n",               // yaml-cpp takes a flow end less indented, libfyaml not
           "-\n--",                           // an item no further right than its '-' (fuzz/regressions/yaml/)
           "d: [1, ?, 3]\n",                  // '?' in a flow sequence (yaml-cpp refuses it)
           "d: [a?b]\n",                      // and inside a word there
           "a: {b:[1]}\n",                    // a flow value right after a plain key's ':'
           "a: 'it'''\n",                     // three single quotes (libfyaml leaks on some)
           std::string(1100, 'k') + ": v\n",  // a key over 1,024 characters
           std::string("a") + std::string(1030, ' ') + ": b\n",      // a key's ':' over 1,024 bytes from its start
           std::string("{a") + std::string(1030, ' ') + ": b}\n",    //
           std::string(1000, 'k') + std::string(25, ' ') + ": v\n",  //
           "{[a]: b}\n",                                             // a key that is a collection
           "...\n",               // a document end marker (yaml-cpp: an empty document)
           "l:\nq\n",             // a value no further right than its key
           "l:\n  q\n",           // a scalar value on a later line than its key
           "-\n  - x\n",          // an item on a later line than its '-'
           "{\"m\"\n\n: {}}\n",   // a flow map's value on a later line than its key
           "a\n...\n---\nb\n",    //
           "",                    // no document
           "# only a comment\n",  //
           "a: :b\n",             // a plain scalar starting with an indicator
           "a: `b\n",             //
       })
    EXPECT_FALSE(read_by_libfyaml(s)) << s;
  // Every YAML file of the tree, every fuzz seed and regression: whatever
  // libfyaml reads is what yaml-cpp builds (read_by_libfyaml checks), and
  // most of the manifests are in the subset.
  size_t files = 0, read = 0;
  for (const char* dir : {"scenarios", "manifests", "data", "deploy", "fuzz/corpus", "fuzz/regressions"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(GPUOPS_SOURCE_DIR) / dir)) {
      if (!entry.is_regular_file() || entry.file_size() > (4 << 20)) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      SCOPED_TRACE(entry.path().string());
      read += read_by_libfyaml(text);
      ++files;
    }
  }
  EXPECT_GT(files, 100u);
  EXPECT_GT(read, 100u);  // 119 of 260 on 2026-12-05
}

// From 256 KiB, load_yaml and load_yaml_all read through libfyaml: the same
// documents as yaml-cpp; a text it leaves to yaml-cpp, and every error, as
// before (the words and the line of yaml-cpp's parser).
TEST(YamlLoad, LargeTextsLoadAsYamlCppLoadsThem) {
  const std::string text = large_text(1500);
  ASSERT_GT(text.size(), 256u * 1024);
  std::vector<YAML::Node> want = YAML::LoadAll(text);
  std::vector<YAML::Node> got = core::load_yaml_all(text, "large.yaml");
  ASSERT_EQ(got.size(), 2u);
  ASSERT_EQ(want.size(), 2u);
  for (size_t i = 0; i < 2; ++i) expect_same_tree(got[i], want[i], "document " + std::to_string(i));
  expect_same_tree(core::load_yaml(text, "large.yaml"), want[0], "first document");
  EXPECT_EQ(got[0]["nodes"][1499]["labels"]["kernel"].Scalar(), "5.15.0-1499-generic");
  EXPECT_EQ(got[0]["nodes"][7]["labels"]["nvidia.com/gpu.present"].Tag(), "!");
  EXPECT_TRUE(got[0]["nodes"][7]["labels"]["empty"].IsNull());
  // Outside the subset (an anchor at the end): yaml-cpp's nodes, shared alias included.
  const std::string aliased = text + "third: &t [x]\nfourth: *t\n";
  got = core::load_yaml_all(aliased, "large.yaml");
  EXPECT_EQ(YAML::Dump(got[1]), YAML::Dump(YAML::LoadAll(aliased)[1]));
  // Errors: the same words and line as the text's small twin gives.
  const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  for (const std::string& bad : {std::string("bad: [unclosed\n"), std::string("a: b: c\n"), std::string(",\n")}) {
    auto small = refused("x: 1\n---\n" + bad);
    auto large = refused(text + "---\n" + bad);
    EXPECT_EQ(large.message(), small.message()) << bad;
    EXPECT_EQ(large.line() - lines, small.line() - 1) << bad;
  }
}

// load_yaml_streaming hands over the items of the sequence at the path, each
// the tree load_yaml builds for it, and leaves a Null node with the item's
// mark in its place; it builds the whole document, as load_yaml, wherever
// the libfyaml reader does not read the text or the path leads nowhere.
TEST(YamlLoad, StreamingHandsOverTheItemsLoadYamlBuilds) {
  const std::string text = large_text(1500);
  const YAML::Node whole = core::load_yaml(text, "large.yaml");
  auto stream = [](const std::string& t, std::vector<std::string> path, std::vector<YAML::Node>& items) {
    items.clear();
    core::SequenceItems si{std::move(path), [&](const YAML::Node& item, size_t i) {
                             EXPECT_EQ(i, items.size());
                             items.push_back(item);
                           }};
    bool streamed = true;
    YAML::Node doc = core::load_yaml_streaming(t, "large.yaml", si, streamed);
    return std::pair{doc, streamed};
  };
  std::vector<YAML::Node> items;
  auto [doc, streamed] = stream(text, {"nodes"}, items);
  ASSERT_TRUE(streamed);
  ASSERT_EQ(items.size(), 1500u);
  ASSERT_EQ(doc["nodes"].size(), 1500u);
  for (size_t i = 0; i < items.size(); i += 149) {
    expect_same_tree(items[i], whole["nodes"][i], "item " + std::to_string(i));
    EXPECT_TRUE(doc["nodes"][i].IsNull());
    EXPECT_EQ(doc["nodes"][i].Mark().line, whole["nodes"][i].Mark().line);
    EXPECT_EQ(doc["nodes"][i].Mark().pos, whole["nodes"][i].Mark().pos);
  }
  expect_same_tree(doc["name"], whole["name"], "name");
  expect_same_tree(doc["steps"], whole["steps"], "steps");

  // A path of two keys; only the first key of a name counts, as operator[] finds it.
  const size_t list = text.find("nodes:\n") + 7;
  std::istringstream lines(text.substr(list, text.find("steps:") - list));
  std::string nested = "cluster:\n  profile: kwok\n  nodes:\n";
  for (std::string line; std::getline(lines, line);) nested += "  " + line + "\n";
  std::tie(doc, streamed) = stream(nested + "steps: []\n", {"cluster", "nodes"}, items);
  EXPECT_TRUE(streamed);
  EXPECT_EQ(items.size(), 1500u);
  std::tie(doc, streamed) = stream("nodes: first\n" + text, {"nodes"}, items);
  EXPECT_FALSE(streamed);  // nodes is the scalar: the later key is not the one read
  EXPECT_TRUE(items.empty());
  EXPECT_EQ(doc["nodes"].Scalar(), "first");

  // The whole document, as load_yaml builds it: ...
  auto whole_as_load_yaml = [&](const std::string& t, const std::string& why) {
    std::vector<YAML::Node> got;
    auto [d, s] = stream(t, {"nodes"}, got);
    EXPECT_FALSE(s) << why;
    expect_same_tree(d, core::load_yaml(t, "large.yaml"), why);
  };
  whole_as_load_yaml(text.substr(0, text.find("\n- name", 200 * 1024) + 1), "under 256 KiB: yaml-cpp's parser");
  whole_as_load_yaml("base: &b {x: 1}\n" + text.substr(text.find("nodes:")), "an anchor: yaml-cpp's");
  whole_as_load_yaml(text + "# caf\xc3\xa9\n", "non-ASCII after the list: left to yaml-cpp after the items");
  whole_as_load_yaml("m: {<<: {k: v}}\n" + text.substr(text.find("nodes:")), "a merge key");
  std::tie(doc, streamed) = stream(text, {"missing"}, items);
  EXPECT_FALSE(streamed);
  EXPECT_TRUE(items.empty());
  EXPECT_EQ(doc["nodes"].size(), 1500u);
  EXPECT_TRUE(doc["nodes"][0].IsMap());
  // Errors are load_yaml's.
  auto e = refused(text + "bad: [unclosed\n");
  try {
    stream(text + "bad: [unclosed\n", {"nodes"}, items);
    ADD_FAILURE() << "not refused";
  } catch (const core::InputError& got) {
    EXPECT_EQ(got.message(), e.message());
    EXPECT_EQ(got.line(), e.line());
  }
}

// Nesting: yaml-cpp refuses 499 nested collections (its DepthGuard); the
// libfyaml reader leaves 400 and more to it, and reads 399 as yaml-cpp does.
TEST(YamlLoad, LibfyamlReaderLeavesDeepNestingToYamlCpp) {
  auto nested = [](int n) { return std::string(n, '[') + "x" + std::string(n, ']') + "\n"; };
  // (Not compared node by node: the comparison stops at 200 levels.)
  EXPECT_TRUE(core::detail::load_yaml_all_by_libfyaml(nested(399)).has_value());
  EXPECT_EQ(YAML::Dump(core::detail::load_yaml_all_by_libfyaml(nested(399))->at(0)),
            YAML::Dump(YAML::LoadAll(nested(399)).at(0)));
  EXPECT_FALSE(core::detail::load_yaml_all_by_libfyaml(nested(400)).has_value());
  EXPECT_FALSE(core::detail::load_yaml_all_by_libfyaml(nested(600)).has_value());
  EXPECT_THROW(YAML::LoadAll(nested(499)), YAML::Exception);
}

// More than 256 spaces in a row never reach libfyaml, whose time grows
// with the square of such a run after a '-' (262,144 spaces: 38 s); they
// go to yaml-cpp's parser, which reads them in milliseconds. Not timed: the
// text is checked to be left to yaml-cpp, at the size where load_yaml
// would give it to libfyaml.
TEST(YamlLoad, LibfyamlReaderNeverSeesLongSpaceRuns) {
  EXPECT_TRUE(read_by_libfyaml("- " + std::string(254, ' ') + "a\n"));
  EXPECT_FALSE(read_by_libfyaml("- " + std::string(300, ' ') + "a\n"));
  EXPECT_FALSE(read_by_libfyaml("x: \"a\"" + std::string(300, ' ') + "\ny: b\n"));
  const std::string large = "-" + std::string(300 * 1024, ' ') + "\n- a\n";
  std::vector<YAML::Node> docs = core::load_yaml_all(large, "spaces.yaml");
  ASSERT_EQ(docs.size(), 1u);
  ASSERT_EQ(docs[0].size(), 2u);
  EXPECT_EQ(docs[0][1].Scalar(), "a");
}
