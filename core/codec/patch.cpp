#include "core/codec/patch.h"

#include <boost/json.hpp>

#include <algorithm>
#include <map>
#include <vector>

#include "core/base/errors.h"

namespace gpuops::core {
namespace json = boost::json;
namespace {

[[noreturn]] void fail(int status, const std::string& message) {
  throw core::InputError::with_status(status, "", 0, "", message);
}

// RFC 6901: "/a/b~1c" -> {"a", "b/c"}.
std::vector<std::string> parse_pointer(const std::string& ptr) {
  std::vector<std::string> out;
  if (ptr.empty()) return out;
  if (ptr[0] != '/')
    fail(422, "the server rejected our request due to an error in our request: invalid JSON pointer \"" + ptr + "\"");
  size_t start = 1;
  while (true) {
    size_t slash = ptr.find('/', start);
    std::string tok = ptr.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    std::string dec;
    for (size_t i = 0; i < tok.size(); ++i) {
      if (tok[i] == '~' && i + 1 < tok.size() && (tok[i + 1] == '0' || tok[i + 1] == '1')) {
        dec.push_back(tok[i + 1] == '0' ? '~' : '/');
        ++i;
      } else {
        dec.push_back(tok[i]);
      }
    }
    out.push_back(dec);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return out;
}

bool parse_index(const std::string& tok, size_t limit, size_t* out) {
  if (tok.empty() || (tok.size() > 1 && tok[0] == '0')) return false;
  size_t v = 0;
  for (char c : tok) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<size_t>(c - '0');
  }
  if (v > limit) return false;
  *out = v;
  return true;
}

[[noreturn]] void missing(const std::string& op, const std::string& path) {
  fail(422, "the server rejected our request due to an error in our request: " + op +
                " operation does not apply: doc is missing path: \"" + path + "\"");
}

// The container of the last token, or throws.
json::value* parent_of(json::value& doc, const std::vector<std::string>& toks, const std::string& op,
                       const std::string& path) {
  json::value* cur = &doc;
  for (size_t i = 0; i + 1 < toks.size(); ++i) {
    if (auto* o = cur->if_object()) {
      auto it = o->find(toks[i]);
      if (it == o->end()) missing(op, path);
      cur = &it->value();
    } else if (auto* a = cur->if_array()) {
      size_t idx = 0;
      if (!parse_index(toks[i], a->size() ? a->size() - 1 : 0, &idx) || idx >= a->size()) missing(op, path);
      cur = &(*a)[idx];
    } else {
      missing(op, path);
    }
  }
  return cur;
}

json::value get_at(json::value& doc, const std::string& path, const std::string& op) {
  auto toks = parse_pointer(path);
  if (toks.empty()) return doc;
  json::value* parent = parent_of(doc, toks, op, path);
  if (auto* o = parent->if_object()) {
    auto it = o->find(toks.back());
    if (it == o->end()) missing(op, path);
    return it->value();
  }
  if (auto* a = parent->if_array()) {
    size_t idx = 0;
    if (!parse_index(toks.back(), a->size(), &idx) || idx >= a->size()) missing(op, path);
    return (*a)[idx];
  }
  missing(op, path);
}

void remove_at(json::value& doc, const std::string& path, const std::string& op) {
  auto toks = parse_pointer(path);
  if (toks.empty()) missing(op, path);
  json::value* parent = parent_of(doc, toks, op, path);
  if (auto* o = parent->if_object()) {
    if (!o->erase(toks.back())) missing(op, path);
    return;
  }
  if (auto* a = parent->if_array()) {
    size_t idx = 0;
    if (!parse_index(toks.back(), a->size(), &idx) || idx >= a->size()) missing(op, path);
    a->erase(a->begin() + static_cast<std::ptrdiff_t>(idx));
    return;
  }
  missing(op, path);
}

void add_at(json::value& doc, const std::string& path, json::value v, const std::string& op, bool replace) {
  auto toks = parse_pointer(path);
  if (toks.empty()) {
    doc = std::move(v);
    return;
  }
  json::value* parent = parent_of(doc, toks, op, path);
  if (auto* o = parent->if_object()) {
    if (replace && !o->contains(toks.back())) missing(op, path);
    (*o)[toks.back()] = std::move(v);
    return;
  }
  if (auto* a = parent->if_array()) {
    if (replace) {
      size_t idx = 0;
      if (!parse_index(toks.back(), a->size(), &idx) || idx >= a->size()) missing(op, path);
      (*a)[idx] = std::move(v);
      return;
    }
    if (toks.back() == "-") {
      a->push_back(std::move(v));
      return;
    }
    size_t idx = 0;
    if (!parse_index(toks.back(), a->size(), &idx)) missing(op, path);
    a->insert(a->begin() + static_cast<std::ptrdiff_t>(idx), std::move(v));
    return;
  }
  missing(op, path);
}

bool is_directive(const std::string& key) { return !key.empty() && key[0] == '$'; }

std::string child_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// Strips directive keys from a patch value that is being inserted whole.
json::value strip(const json::value& v) {
  if (auto* o = v.if_object()) {
    json::object out;
    for (const auto& kv : *o) {
      std::string k(kv.key());
      if (is_directive(k)) continue;
      if (kv.value().is_null()) continue;  // a null in a new map means "absent"
      out[kv.key()] = strip(kv.value());
    }
    return out;
  }
  if (auto* a = v.if_array()) {
    json::array out;
    for (const auto& e : *a) {
      if (auto* eo = e.if_object()) {
        auto* p = eo->if_contains("$patch");
        if (p && p->is_string() && p->as_string() == "delete") continue;
      }
      out.push_back(strip(e));
    }
    return out;
  }
  return v;
}

json::value smp_list(const json::array* target, const json::array& patch, const std::string& path,
                     const json::array* order, const json::array* delete_primitives);

// Go's %v of a decoded JSON value (map[string]interface{} with int64s, as
// kjson.UnmarshalCaseSensitivePreserveInts leaves them): maps as
// map[k:v ...] in key order, slices as [a b], nil as <nil>.
std::string go_v(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return "<nil>";
    case json::kind::bool_: return v.as_bool() ? "true" : "false";
    case json::kind::int64: return std::to_string(v.as_int64());
    case json::kind::uint64: return std::to_string(v.as_uint64());
    case json::kind::double_: return json::serialize(v);
    case json::kind::string: return std::string(v.as_string());
    case json::kind::array: {
      std::string out = "[";
      for (size_t i = 0; i < v.as_array().size(); ++i) out += (i ? " " : "") + go_v(v.as_array()[i]);
      return out + "]";
    }
    case json::kind::object: {
      std::vector<std::string> keys;
      for (const auto& kv : v.as_object()) keys.emplace_back(kv.key());
      std::sort(keys.begin(), keys.end());
      std::string out = "map[";
      for (size_t i = 0; i < keys.size(); ++i) out += (i ? " " : "") + keys[i] + ":" + go_v(v.as_object().at(keys[i]));
      return out + "]";
    }
  }
  return "";
}

// mirrors handleDirectiveInMergeMap and mergeSliceWithSpecialElements
// (apimachinery/pkg/util/strategicpatch/patch.go): a `$patch` other than
// "replace" or "delete" is mergepatch.ErrBadPatchType, "unknown patch type:
// %s in map: %v". interpretStrategicMergePatchError (handlers/patch.go)
// passes it on as it is, a plain error, which ErrorToAPIStatus answers 500
// with no reason.
[[noreturn]] void bad_patch_type(const json::value& directive, const json::object& m) {
  std::string t = directive.is_string() ? std::string(directive.as_string()) : "%!s(" + go_v(directive) + ")";
  throw core::InputError::with_status(500, "request body", 0, "",
                                      "unknown patch type: " + t + " in map: " + go_v(json::value(m)));
}

json::value smp(const json::value& target, const json::value& patch, const std::string& path) {
  const json::object* p = patch.if_object();
  if (!p) return strip(patch);
  if (auto* d = p->if_contains("$patch")) {
    if (d->is_string() && d->as_string() == "replace") return strip(patch);
    if (d->is_string() && d->as_string() == "delete") return nullptr;
    bad_patch_type(*d, *p);
  }
  json::object out;
  if (auto* t = target.if_object()) out = *t;
  for (const auto& kv : *p) {
    std::string key(kv.key());
    if (is_directive(key)) continue;
    std::string cp = child_path(path, key);
    if (kv.value().is_null()) {
      out.erase(key);
      continue;
    }
    const json::value* cur = out.if_contains(key);
    if (kv.value().is_array()) {
      const json::array* order = nullptr;
      const json::array* del = nullptr;
      if (auto* o = p->if_contains("$setElementOrder/" + key)) order = o->if_array();
      if (auto* o = p->if_contains("$deleteFromPrimitiveList/" + key)) del = o->if_array();
      out[key] = smp_list(cur ? cur->if_array() : nullptr, kv.value().as_array(), cp, order, del);
      continue;
    }
    if (kv.value().is_object()) {
      json::value merged = smp(cur ? *cur : json::value(json::object()), kv.value(), cp);
      if (merged.is_null())
        out.erase(key);
      else
        out[key] = std::move(merged);
      continue;
    }
    out[key] = kv.value();
  }
  // Directives that name lists the patch does not otherwise touch.
  for (const auto& kv : *p) {
    std::string key(kv.key());
    const std::string order_prefix = "$setElementOrder/";
    const std::string del_prefix = "$deleteFromPrimitiveList/";
    std::string list;
    if (key.rfind(order_prefix, 0) == 0)
      list = key.substr(order_prefix.size());
    else if (key.rfind(del_prefix, 0) == 0)
      list = key.substr(del_prefix.size());
    else
      continue;
    if (p->contains(list)) continue;
    const json::value* cur = out.if_contains(list);
    if (!cur || !cur->is_array()) continue;
    const json::array* order = nullptr;
    const json::array* del = nullptr;
    if (auto* o = p->if_contains(order_prefix + list)) order = o->if_array();
    if (auto* o = p->if_contains(del_prefix + list)) del = o->if_array();
    out[list] = smp_list(&cur->as_array(), json::array(), child_path(path, list), order, del);
  }
  if (auto* r = p->if_contains("$retainKeys")) {
    if (auto* keys = r->if_array()) {
      json::object kept;
      for (const auto& kv : out)
        for (const auto& k : *keys)
          if (k.is_string() && k.as_string() == kv.key()) kept[kv.key()] = kv.value();
      out = std::move(kept);
    }
  }
  return out;
}

json::value smp_list(const json::array* target, const json::array& patch, const std::string& path,
                     const json::array* order, const json::array* delete_primitives) {
  std::string key = patch_merge_key(path);
  size_t dot = path.rfind('.');
  std::string last = dot == std::string::npos ? path : path.substr(dot + 1);
  if (last == "finalizers") {  // patchStrategy:"merge" on a list of strings
    json::array out = target ? *target : json::array();
    for (const auto& v : patch)
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    if (delete_primitives) {
      json::array kept;
      for (const auto& v : out)
        if (std::find(delete_primitives->begin(), delete_primitives->end(), v) == delete_primitives->end())
          kept.push_back(v);
      out = std::move(kept);
    }
    return out;
  }
  if (key.empty()) return strip(json::value(patch));
  json::array out = target ? *target : json::array();
  auto find = [&](const json::value& k) -> json::array::iterator {
    for (auto it = out.begin(); it != out.end(); ++it)
      if (auto* o = it->if_object())
        if (auto* v = o->if_contains(key); v && *v == k) return it;
    return out.end();
  };
  for (const auto& item : patch) {
    const json::object* io = item.if_object();
    const json::value* k = io ? io->if_contains(key) : nullptr;
    if (!k) {
      if (io) {
        if (auto* d = io->if_contains("$patch"); d && d->is_string() && d->as_string() == "replace") {
          out.clear();
          continue;
        }
        if (auto* d = io->if_contains("$patch"); d && !(d->is_string() && d->as_string() == "delete"))
          bad_patch_type(*d, *io);
      }
      out.push_back(strip(item));
      continue;
    }
    auto it = find(*k);
    auto* d = io->if_contains("$patch");
    if (d && d->is_string() && d->as_string() == "delete") {
      if (it != out.end()) out.erase(it);
      continue;
    }
    if (d && !(d->is_string() && d->as_string() == "replace")) bad_patch_type(*d, *io);
    if (it == out.end())
      out.push_back(strip(item));
    else
      *it = smp(*it, item, path);
  }
  if (order) {
    json::array sorted;
    std::vector<bool> used(out.size(), false);
    for (const auto& o : *order) {
      const json::value* k = o.is_object() ? o.as_object().if_contains(key) : nullptr;
      if (!k) continue;
      for (size_t i = 0; i < out.size(); ++i) {
        if (used[i]) continue;
        auto* v = out[i].is_object() ? out[i].as_object().if_contains(key) : nullptr;
        if (v && *v == *k) {
          sorted.push_back(out[i]);
          used[i] = true;
          break;
        }
      }
    }
    for (size_t i = 0; i < out.size(); ++i)
      if (!used[i]) sorted.push_back(out[i]);
    out = std::move(sorted);
  }
  return out;
}

}  // namespace

json::value merge_patch(const json::value& target, const json::value& patch) {
  const json::object* p = patch.if_object();
  if (!p) return patch;
  json::object out;
  if (auto* t = target.if_object()) out = *t;
  for (const auto& kv : *p) {
    if (kv.value().is_null()) {
      out.erase(kv.key());
      continue;
    }
    const json::value* cur = out.if_contains(kv.key());
    out[kv.key()] = merge_patch(cur ? *cur : json::value(nullptr), kv.value());
  }
  return out;
}

json::value json_patch(const json::value& target, const json::value& patch) {
  const json::array* ops = patch.if_array();
  if (!ops) fail(400, "json: cannot unmarshal object into Go value of type jsonpatch.Patch");
  // mirrors applyJSPatch, k8s.io/apiserver pkg/endpoints/handlers/patch.go:
  // at most maxJSONPatchOperations (10,000) operations, 413 beyond.
  if (ops->size() > kMaxJsonPatchOperations)
    fail(413, "The allowed maximum operations in a JSON patch is " + std::to_string(kMaxJsonPatchOperations) +
                  ", got " + std::to_string(ops->size()));
  std::size_t copied = 0;  // bytes of the values `copy` has duplicated so far
  json::value doc = target;
  for (const auto& opv : *ops) {
    const json::object* op = opv.if_object();
    if (!op) fail(400, "json: cannot unmarshal into Go value of type jsonpatch.Operation");
    auto str = [&](const char* k) -> std::string {
      auto* v = op->if_contains(k);
      return v && v->is_string() ? std::string(v->as_string()) : "";
    };
    std::string name = str("op");
    std::string path = str("path");
    const json::value* value = op->if_contains("value");
    if (name == "add" || name == "replace") {
      if (!value)
        fail(422, "the server rejected our request due to an error in our request: " + name +
                      " operation does not apply: doc is missing value");
      add_at(doc, path, *value, name, name == "replace");
    } else if (name == "remove") {
      remove_at(doc, path, name);
    } else if (name == "move" || name == "copy") {
      std::string from = str("from");
      json::value v = get_at(doc, from, name);
      if (name == "copy") {
        // The CVE-2019-1002100 class: each copy may double the document, so
        // a small patch could make a huge object. json-patch bounds the
        // accumulated size of copied values (AccumulatedCopySizeLimit).
        copied += json::serialize(v).size();
        if (copied > kMaxJsonPatchCopyBytes)
          fail(422,
               "the server rejected our request due to an error in our request: Unable to copy, the "
               "accumulated size increase of copy is " +
                   std::to_string(copied) + ", exceeding the limit " + std::to_string(kMaxJsonPatchCopyBytes));
      }
      if (name == "move") remove_at(doc, from, name);
      add_at(doc, path, v, name, false);
    } else if (name == "test") {
      json::value v = get_at(doc, path, name);
      if (!value || v != *value)
        fail(422, "the server rejected our request due to an error in our request: testing value " + path +
                      " failed: test failed");
    } else {
      fail(422, "the server rejected our request due to an error in our request: Unexpected kind: " + name);
    }
  }
  return doc;
}

json::value strategic_merge_patch(const json::value& target, const json::value& patch, const std::string& path) {
  if (!patch.is_object())
    fail(
        400,
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, "
        "application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json");
  json::value out = smp(target, patch, path);
  if (out.is_null()) return json::object();
  return out;
}

std::string patch_merge_key(const std::string& path) {
  size_t dot = path.rfind('.');
  std::string last = dot == std::string::npos ? path : path.substr(dot + 1);
  static const std::map<std::string, std::string> keys = {
      {"containers", "name"},          {"initContainers", "name"},
      {"ephemeralContainers", "name"}, {"volumes", "name"},
      {"imagePullSecrets", "name"},    {"env", "name"},
      {"schedulingGates", "name"},     {"resourceClaims", "name"},
      {"ports", "containerPort"},      {"volumeMounts", "mountPath"},
      {"volumeDevices", "devicePath"}, {"hostAliases", "ip"},
      {"ownerReferences", "uid"},      {"conditions", "type"},
      {"addresses", "type"},           {"topologySpreadConstraints", "topologyKey"},
  };
  auto it = keys.find(last);
  return it == keys.end() ? "" : it->second;
}

// mirrors checkName, k8s.io/apiserver pkg/endpoints/handlers/rest.go
void check_object_name(const std::string& object_name, const std::string& url_name) {
  if (object_name.empty())
    fail(400, "the name of the object (" + url_name + " based on URL) was undeterminable: name must be provided");
  if (object_name != url_name)
    fail(400, "the name of the object (" + object_name + ") does not match the name on the URL (" + url_name + ")");
}

void check_patched_identity(const json::value& patched, const std::string& url_name, bool custom,
                            const std::string& kind, const std::string& api_version) {
  const json::object* o = patched.if_object();
  if (!o) return;
  const json::value* meta = o->if_contains("metadata");
  if (meta && !meta->is_null() && !meta->is_object()) return;  // the decoder refuses it (422 patch: ...)
  const json::value* name = meta && meta->is_object() ? meta->as_object().if_contains("name") : nullptr;
  if (!name || name->is_null()) check_object_name("", url_name);
  if (name && name->is_string()) check_object_name(std::string(name->get_string()), url_name);
  if (!custom) return;
  // mirrors customResourceValidator.ValidateTypeMeta (apiextensions-apiserver
  // pkg/registry/customresource/validator.go); the Invalid error names the
  // patched object's own group and kind (errors.NewInvalid).
  auto str = [&](const char* key) {
    const json::value* v = o->if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  const std::string got_kind = str("kind");
  const std::string got_version = str("apiVersion");
  std::vector<core::InputError::Cause> causes;
  if (got_kind != kind)
    causes.push_back({"FieldValueInvalid", "kind", "Invalid value: \"" + got_kind + "\": must be " + kind});
  if (got_version != api_version)
    causes.push_back(
        {"FieldValueInvalid", "apiVersion", "Invalid value: \"" + got_version + "\": must be " + api_version});
  if (causes.empty()) return;
  const size_t slash = got_version.find('/');
  const std::string group = slash == std::string::npos ? "" : got_version.substr(0, slash);
  std::string list;
  for (const auto& c : causes) list += (list.empty() ? "" : ", ") + c.field + ": " + c.message;
  if (causes.size() > 1) list = "[" + list + "]";
  core::InputError e = core::InputError::with_status(
      422, "", 0, causes.size() == 1 ? causes[0].field : "",
      got_kind + (group.empty() ? "" : "." + group) + " \"" + url_name + "\" is invalid: " + list);
  e.causes = std::move(causes);
  throw e;
}

}  // namespace gpuops::core
