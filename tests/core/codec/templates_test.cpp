// core/codec/templates.cpp: Helm/Go templates told from manifests.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <tuple>
#include <variant>

#include "core/codec/codec.h"
#include "core/codec/codec_internal.h"
#include "core/codec/templates.h"

#include "codec_test_helpers.h"

using namespace gpuops;
namespace json = boost::json;
using gpuops::testing::decode_error;
using gpuops::testing::kDs;
using gpuops::testing::replace;

// A template told from a manifest (core/codec/templates.h): a Go action outside a
// comment line; the operator's placeholder in any string, with its line.
TEST(Templates, TemplatesAreToldFromManifests) {
  EXPECT_EQ(core::template_action_line("a: 1\n# {{ not this }}\n  b: {{ .Values.b }}\n"), 3);
  EXPECT_EQ(core::template_action_line("{{- if .Values.x }}\n"), 1);
  EXPECT_EQ(core::template_action_line("a: '{{'\nb: '}}'\n"), 0);
  EXPECT_EQ(core::template_action_line(""), 0);
  // Strings, not structure: quoted, a plain scalar's text, a block scalar's.
  EXPECT_EQ(core::template_action_line("args: [\"--format={{.ID}}\", '{{ it''s }}']\nx: --f={{.ID}}\ny: a-{{ b }}\n"
                                       "d: |\n  {{ $labels.node }}\n\n  more {{ x }}\ne: 1 # {{ c }}\n"),
            0);
  EXPECT_EQ(core::template_action_line("d: >-\n  {{ x }}\nname: {{ .Release.Name }}\n"), 3);
  EXPECT_EQ(core::template_action_line("list:\n- {{ .X }}\n"), 2);
  EXPECT_EQ(core::template_action_line("m: [a, {{ .X }}]\n"), 1);
  auto docs = core::read_documents(
      "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      containers:\n"
      "      - name: c\n        image: \"FILLED BY THE OPERATOR\"\n",
      "asset.yaml");
  EXPECT_EQ(core::operator_placeholder_line(docs.at(0)), 10);
  EXPECT_EQ(core::operator_placeholder_line(core::read_documents(kDs, "d.yaml").at(0)), -1);
  EXPECT_EQ(
      core::operator_placeholder_line(core::read_documents(R"({"a":["FILLED BY THE OPERATOR"]})", "a.json").at(0)), 0);
  EXPECT_EQ(std::string(core::go_template_error("t.yaml", 3).what()),
            "t.yaml:3: this is a template (Helm/Go \"{{ }}\"), not a manifest: render it first (helm template ...)");
}
