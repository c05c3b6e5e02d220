// The Accept header's negotiation (simulator/apiserver/api_server_impl.h,
// negotiate_output). Mirrors k8s.io/apiserver
// pkg/endpoints/handlers/negotiation/negotiate.go (NegotiateMediaTypeOptions,
// acceptMediaTypeOptions) over the clauses goautoneg.ParseAccept reads, with
// the restrictions of handlers.RequestScope.AllowsMediaTypeTransform (resource
// endpoints), negotiation.DefaultEndpointRestrictions and
// aggregated.DiscoveryEndpointRestrictions (discovery), and the 406 of
// negotiation.NewNotAcceptableError.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/apiserver/api_server_impl.h"

namespace gpuops::simulator::internal {

namespace {

// strings.Trim(s, " ").
std::string_view trim_spaces(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep, size_t max_parts = SIZE_MAX) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < max_parts) {
    size_t at = s.find(sep);
    if (at == std::string_view::npos) break;
    out.push_back(s.substr(0, at));
    s.remove_prefix(at + 1);
  }
  out.push_back(s);
  return out;
}

// One clause of an Accept header (goautoneg.Accept).
struct Clause {
  std::string type, subtype;
  double q = 1.0;
  std::map<std::string, std::string> params;
};

// strconv.ParseFloat(s, 32) as goautoneg uses it: the error is dropped, so a
// q that does not parse is 0.
double parse_q(std::string_view s) {
  std::string text(s);
  if (text.empty() || text.find_first_of(" \t") != std::string::npos) return 0;
  try {
    size_t used = 0;
    double q = std::stod(text, &used);
    return used == text.size() ? static_cast<double>(static_cast<float>(q)) : 0;
  } catch (const std::exception&) {
    return 0;
  }
}

// mirrors goautoneg.ParseAccept: comma-separated clauses, each trimmed of
// spaces; "type/subtype" (or "*" alone); ";"-separated parameters of the form
// k=v (others skipped), q read as a number; then sorted by q, concrete types
// before wildcards (sort.Sort over accept_slice.Less: an insertion sort for
// the dozen clauses a client sends, which keeps the order of equals).
std::vector<Clause> parse_accept(std::string_view header) {
  std::vector<Clause> out;
  for (std::string_view part : split(header, ',')) {
    part = trim_spaces(part);
    std::vector<std::string_view> mrp = split(part, ';');
    std::vector<std::string_view> sp = split(mrp[0], '/');
    Clause c;
    c.type = std::string(trim_spaces(sp[0]));
    if (sp.size() == 1 && c.type == "*") {
      c.subtype.assign(1, '*');  // not = "*": GCC 12 -Wrestrict false positive
    } else if (sp.size() == 2) {
      c.subtype = std::string(trim_spaces(sp[1]));
    } else {
      continue;
    }
    for (size_t i = 1; i < mrp.size(); ++i) {
      std::vector<std::string_view> kv = split(mrp[i], '=', 2);
      if (kv.size() != 2) continue;
      std::string token(trim_spaces(kv[0]));
      if (token == "q")
        c.q = parse_q(kv[1]);
      else
        c.params[token] = std::string(trim_spaces(kv[1]));
    }
    out.push_back(std::move(c));
  }
  auto less = [](const Clause& a, const Clause& b) {
    if (a.q > b.q) return true;
    if (a.type != "*" && b.type == "*") return true;
    if (a.subtype != "*" && b.subtype == "*") return true;
    return false;
  };
  for (size_t i = 1; i < out.size(); ++i)
    for (size_t j = i; j > 0 && less(out[j], out[j - 1]); --j) std::swap(out[j], out[j - 1]);
  return out;
}

// The serializers kube-apiserver's codec factory offers (json, yaml,
// protobuf; CBOR only behind the CBORServingAndStorage gate, off), and
// whether each has a stream serializer (for stream=watch).
struct Offered {
  const char* type;
  const char* subtype;
  bool streams;
};
constexpr Offered kOffered[] = {
    {"application", "json", true},
    {"application", "yaml", false},
    {"application", "vnd.kubernetes.protobuf", true},
};

// acceptMediaTypeOptions for one clause and one offered type: the
// conversion the clause asks for (as/g/v) must be one the endpoint makes.
bool allowed(const Clause& c, const Offered& o, Endpoint endpoint, std::string& convert_kind) {
  bool convert = false;
  std::string as, g, v;
  for (const auto& [k, val] : c.params) {
    if (k == "as") {
      convert = true;
      as = val;
    } else if (k == "g") {
      convert = true;
      g = val;
    } else if (k == "v") {
      convert = true;
      v = val;
    } else if (k == "stream") {
      if (!val.empty() && (!o.streams || val != "watch")) return false;
    } else if (k == "sv") {
      // RequestScope.AllowsServerVersion: the meta group's version; the
      // discovery restrictions allow none.
      if (!val.empty() && (endpoint == Endpoint::kDiscovery || val != "v1")) return false;
    }
  }
  const std::string_view subtype(o.subtype);
  if (endpoint == Endpoint::kDiscovery) {
    // DefaultEndpointRestrictions (no conversion), or the aggregated
    // discovery document (aggregated.IsAggregatedDiscoveryGVK).
    if (!convert) return true;
    if (g == "apidiscovery.k8s.io" && (v == "v2" || v == "v2beta1") && as == "APIGroupDiscoveryList") {
      convert_kind = as;
      return true;
    }
    return false;
  }
  if (!convert) {
    // A custom resource's StandardSerializers leave protobuf out (CRDs are
    // not served as protobuf).
    return endpoint == Endpoint::kResource || subtype != "vnd.kubernetes.protobuf";
  }
  if (g != "meta.k8s.io" || (v != "v1" && v != "v1beta1")) return false;
  if (as == "Table") {
    if (subtype != "json" && subtype != "yaml") return false;
  } else if (as != "PartialObjectMetadata" && as != "PartialObjectMetadataList") {
    return false;
  }
  convert_kind = as;
  return true;
}

}  // namespace

std::optional<std::string> negotiate_output(const Request& req, Endpoint endpoint) {
  auto it = req.find(boost::beast::http::field::accept);
  std::string_view header =
      it == req.end() ? std::string_view() : std::string_view(it->value().data(), it->value().size());
  if (header.empty()) return std::string();
  for (const Clause& c : parse_accept(header)) {
    for (const Offered& o : kOffered) {
      const bool match =
          (c.type == o.type && (c.subtype == o.subtype || c.subtype == "*")) || (c.type == "*" && c.subtype == "*");
      if (!match) continue;
      std::string kind;
      if (allowed(c, o, endpoint, kind)) return kind;
    }
  }
  return std::nullopt;
}

void throw_not_acceptable() {
  // negotiation.NewNotAcceptableError with MediaTypesForSerializer's list.
  throw_api(406,
            "only the following media types are accepted: application/json, application/yaml, "
            "application/vnd.kubernetes.protobuf");
}

}  // namespace gpuops::simulator::internal
