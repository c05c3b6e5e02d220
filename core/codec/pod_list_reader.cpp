// core/codec/pod_list_reader.cpp: read_pod_list_page (core/codec/pod_list_reader.h), a
// boost::json::basic_parser handler that fills core::Pod as
// decode_pod_typed (core/codec/decode.cpp) does, and gives up wherever it would
// not be sure to.
#include "core/codec/pod_list_reader.h"

#include <boost/json/basic_parser_impl.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "core/codec/documents.h"
#include "core/kube/names.h"
#include "core/model/quantity.h"
#include "core/model/rfc3339.h"

namespace gpuops::core {

namespace {

namespace json = boost::json;

// Where the parser is: each object or array being read is one frame.
enum class Ctx : uint8_t {
  kTop,           // the PodList
  kListMeta,      // .metadata
  kItems,         // .items[]
  kPod,           // an item
  kMeta,          // .metadata
  kLabels,        // .metadata.labels (a map)
  kAnnotations,   // .metadata.annotations (a map)
  kOwnerRefs,     // .metadata.ownerReferences[]
  kOwnerRef,      // one of them
  kFinalizers,    // .metadata.finalizers[] (strings)
  kSpec,          // .spec
  kNodeSelector,  // .spec.nodeSelector (a map)
  kAffinity,      // .spec.affinity
  kNodeAffinity,  // .spec.affinity.nodeAffinity
  kRequired,      // .requiredDuringSchedulingIgnoredDuringExecution
  kTerms,         // .nodeSelectorTerms[]
  kTerm,          // one of them
  kReqs,          // .matchExpressions[] or .matchFields[] (req_which_)
  kReq,           // one requirement
  kReqValues,     // its .values[] (strings)
  kTolerations,   // .spec.tolerations[]
  kToleration,    // one of them
  kContainers,    // .spec.initContainers[] or .containers[] (container_which_)
  kContainer,     // one container
  kResources,     // its .resources
  kResourceList,  // .requests or .limits (a map of quantities; Frame::which)
  kStatus,        // .status
  kConditions,    // .status.conditions[]
  kCondition,     // one of them
  kStatuses,      // .status.initContainerStatuses[] or .containerStatuses[] (status_which_)
  kCStatus,       // one ContainerStatus
  kState,         // its .state
  kStateDetail,   // .state.waiting / running / terminated (Frame::which 0, 1, 2)
  kLastState,     // its .lastState
  kTerminated,    // .lastState.terminated
};

// The members each object context reads, in the order of the field ids
// (1-based; 0 is a member it does not read). They are the members
// decode_pod_typed, decode_meta, decode_pod_spec, decode_requirements,
// decode_containers and decode_resource_list read.
constexpr std::string_view kTopF[] = {"metadata", "items"};
enum { tMetadata = 1, tItems };
constexpr std::string_view kListMetaF[] = {"resourceVersion", "continue", "remainingItemCount"};
enum { lmResourceVersion = 1, lmContinue, lmRemaining };
constexpr std::string_view kPodF[] = {"metadata", "spec", "status"};
enum { pMetadata = 1, pSpec, pStatus };
constexpr std::string_view kMetaF[] = {"name",
                                       "namespace",
                                       "uid",
                                       "resourceVersion",
                                       "generation",
                                       "creationTimestamp",
                                       "deletionTimestamp",
                                       "deletionGracePeriodSeconds",
                                       "labels",
                                       "annotations",
                                       "ownerReferences",
                                       "finalizers"};
enum {
  mName = 1,
  mNamespace,
  mUid,
  mResourceVersion,
  mGeneration,
  mCreation,
  mDeletion,
  mGrace,
  mLabels,
  mAnnotations,
  mOwnerRefs,
  mFinalizers
};
constexpr std::string_view kOwnerRefF[] = {"apiVersion", "kind", "name", "uid", "controller"};
enum { orApiVersion = 1, orKind, orName, orUid, orController };
constexpr std::string_view kSpecF[] = {
    "nodeName",       "nodeSelector", "hostNetwork",     "terminationGracePeriodSeconds", "affinity", "tolerations",
    "initContainers", "containers",   "runtimeClassName"};
enum {
  sNodeName = 1,
  sNodeSelector,
  sHostNetwork,
  sGrace,
  sAffinity,
  sTolerations,
  sInitContainers,
  sContainers,
  sRuntimeClass
};
constexpr std::string_view kAffinityF[] = {"nodeAffinity"};
constexpr std::string_view kNodeAffinityF[] = {"requiredDuringSchedulingIgnoredDuringExecution"};
constexpr std::string_view kRequiredF[] = {"nodeSelectorTerms"};
constexpr std::string_view kTermF[] = {"matchExpressions", "matchFields"};
enum { tmExpressions = 1, tmFields };
constexpr std::string_view kReqF[] = {"key", "operator", "values"};
enum { rKey = 1, rOperator, rValues };
constexpr std::string_view kTolerationF[] = {"key", "operator", "value", "effect", "tolerationSeconds"};
enum { toKey = 1, toOperator, toValue, toEffect, toSeconds };
constexpr std::string_view kContainerF[] = {"name", "image", "resources"};
enum { cName = 1, cImage, cResources };
constexpr std::string_view kResourcesF[] = {"requests", "limits"};
enum { rsRequests = 1, rsLimits };
constexpr std::string_view kStatusF[] = {
    "phase", "reason", "message", "startTime", "conditions", "initContainerStatuses", "containerStatuses", "podIP"};
enum { stPhase = 1, stReason, stMessage, stStartTime, stConditions, stInitStatuses, stStatuses, stPodIP };
constexpr std::string_view kConditionF[] = {"type", "status", "reason", "message", "lastTransitionTime"};
enum { coType = 1, coStatus, coReason, coMessage, coTransition };
constexpr std::string_view kCStatusF[] = {"name", "ready", "restartCount", "state", "lastState"};
enum { csName = 1, csReady, csRestartCount, csState, csLastState };
// decode_pod_typed reads the three states in this order.
constexpr std::string_view kStateF[] = {"waiting", "running", "terminated"};
constexpr std::string_view kStateDetailF[] = {"reason", "message", "exitCode", "startedAt"};
enum { sdReason = 1, sdMessage, sdExitCode, sdStartedAt };
constexpr std::string_view kLastStateF[] = {"terminated"};
constexpr std::string_view kTerminatedF[] = {"reason", "message", "exitCode"};
enum { teReason = 1, teMessage, teExitCode };

template <size_t N>
uint8_t find_field(const std::string_view (&names)[N], std::string_view key) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == key) return static_cast<uint8_t>(i + 1);
  return 0;
}

uint8_t field_of(Ctx c, std::string_view key) {
  switch (c) {
    case Ctx::kTop: return find_field(kTopF, key);
    case Ctx::kListMeta: return find_field(kListMetaF, key);
    case Ctx::kPod: return find_field(kPodF, key);
    case Ctx::kMeta: return find_field(kMetaF, key);
    case Ctx::kOwnerRef: return find_field(kOwnerRefF, key);
    case Ctx::kSpec: return find_field(kSpecF, key);
    case Ctx::kAffinity: return find_field(kAffinityF, key);
    case Ctx::kNodeAffinity: return find_field(kNodeAffinityF, key);
    case Ctx::kRequired: return find_field(kRequiredF, key);
    case Ctx::kTerm: return find_field(kTermF, key);
    case Ctx::kReq: return find_field(kReqF, key);
    case Ctx::kToleration: return find_field(kTolerationF, key);
    case Ctx::kContainer: return find_field(kContainerF, key);
    case Ctx::kResources: return find_field(kResourcesF, key);
    case Ctx::kStatus: return find_field(kStatusF, key);
    case Ctx::kCondition: return find_field(kConditionF, key);
    case Ctx::kCStatus: return find_field(kCStatusF, key);
    case Ctx::kState: return find_field(kStateF, key);
    case Ctx::kStateDetail: return find_field(kStateDetailF, key);
    case Ctx::kLastState: return find_field(kLastStateF, key);
    case Ctx::kTerminated: return find_field(kTerminatedF, key);
    default: return 0;
  }
}

// A (context, field id) pair as one case label.
constexpr int key(Ctx c, int field) { return static_cast<int>(c) * 64 + field; }

bool is_map(Ctx c) {
  return c == Ctx::kLabels || c == Ctx::kAnnotations || c == Ctx::kNodeSelector || c == Ctx::kResourceList;
}

class Handler {
 public:
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();

  explicit Handler(PodListPage* out) : out_(out) {}

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }

  bool on_object_begin(json::error_code& ec) {
    if (skip_) return ++skip_, true;
    if (stack_.empty()) return push(Ctx::kTop, false), true;
    Frame& f = stack_.back();
    if (f.array) {
      switch (f.ctx) {
        case Ctx::kItems: out_->pods.emplace_back(); return push(Ctx::kPod, false), true;
        case Ctx::kOwnerRefs: meta().owner_references.emplace_back(); return push(Ctx::kOwnerRef, false), true;
        case Ctx::kTerms: terms().emplace_back(); return push(Ctx::kTerm, false), true;
        case Ctx::kReqs: reqs().emplace_back(); return push(Ctx::kReq, false), true;
        case Ctx::kTolerations: pod().spec.tolerations.emplace_back(); return push(Ctx::kToleration, false), true;
        case Ctx::kContainers: containers().emplace_back(); return push(Ctx::kContainer, false), true;
        case Ctx::kConditions: pod().status.conditions.emplace_back(); return push(Ctx::kCondition, false), true;
        case Ctx::kStatuses:
          statuses().emplace_back();
          subs_ = {};
          return push(Ctx::kCStatus, false), true;
        default: return give_up(ec);
      }
    }
    switch (field(f)) {
      case 0:
      case key(Ctx::kListMeta, lmRemaining): return ++skip_, true;  // a hint read only as an integer
      case key(Ctx::kTop, tMetadata): return push(Ctx::kListMeta, false), true;
      case key(Ctx::kPod, pMetadata): return push(Ctx::kMeta, false), true;
      case key(Ctx::kPod, pSpec): return push(Ctx::kSpec, false), true;
      case key(Ctx::kPod, pStatus): return push(Ctx::kStatus, false), true;
      case key(Ctx::kMeta, mLabels): return push(Ctx::kLabels, false), true;
      case key(Ctx::kMeta, mAnnotations): return push(Ctx::kAnnotations, false), true;
      case key(Ctx::kSpec, sNodeSelector): return push(Ctx::kNodeSelector, false), true;
      case key(Ctx::kSpec, sAffinity): return push(Ctx::kAffinity, false), true;
      case key(Ctx::kAffinity, 1): return push(Ctx::kNodeAffinity, false), true;
      case key(Ctx::kNodeAffinity, 1):
        // Present (not null): a required affinity, with no term until
        // nodeSelectorTerms gives some.
        pod().spec.required_node_affinity.emplace();
        return push(Ctx::kRequired, false), true;
      case key(Ctx::kContainer, cResources): return push(Ctx::kResources, false), true;
      case key(Ctx::kResources, rsRequests): return push(Ctx::kResourceList, false, 0), true;
      case key(Ctx::kResources, rsLimits): return push(Ctx::kResourceList, false, 1), true;
      case key(Ctx::kCStatus, csState): return push(Ctx::kState, false), true;
      case key(Ctx::kCStatus, csLastState): return push(Ctx::kLastState, false), true;
      case key(Ctx::kState, 1):
      case key(Ctx::kState, 2):
      case key(Ctx::kState, 3): {
        uint8_t which = static_cast<uint8_t>(f.field - 1);
        subs_[which].present = true;
        return push(Ctx::kStateDetail, false, which), true;
      }
      case key(Ctx::kLastState, 1): status().last_terminated.emplace(); return push(Ctx::kTerminated, false), true;
      default: return give_up(ec);
    }
  }

  bool on_object_end(std::size_t, json::error_code& ec) {
    if (skip_) return --skip_, true;
    const Frame f = stack_.back();
    const Ctx c = f.ctx;
    stack_.pop_back();
    if (c == Ctx::kReq && !(f.seen & (1u << rOperator))) {
      // decode_requirements parses the operator even when absent: "" is
      // no operator it knows.
      Requirement& r = reqs().back();
      r.op = parse_selector_operator("");
      if (r.op == SelectorOperator::kUnknown) r.unknown_op.clear();
    } else if (c == Ctx::kPod) {
      // validate_meta_namespace and validate_meta_annotations, as
      // decode_pod_typed calls them: a failure is decode_pod_typed's error.
      const ObjectMeta& m = meta();
      if (!m.namespace_.empty() && !validate_dns1123_label(m.namespace_).empty()) return give_up(ec);
      size_t total = 0;
      for (const auto& [k, v] : m.annotations) total += k.size() + v.size();
      if (total > 256 * 1024) return give_up(ec);
    } else if (c == Ctx::kCStatus) {
      // The states in decode_pod_typed's order: the last present one names
      // the state and gives its reason and message; an exit code is kept
      // from the last that has one; startedAt is running's.
      ContainerStatus& cs = status();
      for (size_t i = 0; i < subs_.size(); ++i) {
        if (!subs_[i].present) continue;
        cs.state = std::string(kStateF[i]);
        cs.reason = std::move(subs_[i].reason);
        cs.message = std::move(subs_[i].message);
        if (subs_[i].exit_code) cs.exit_code = subs_[i].exit_code;
        if (i == 1) cs.started_at = subs_[i].started_at;
      }
    }
    return true;
  }

  bool on_array_begin(json::error_code& ec) {
    if (skip_) return ++skip_, true;
    if (stack_.empty() || stack_.back().array) return give_up(ec);
    Frame& f = stack_.back();
    switch (field(f)) {
      case 0:
      case key(Ctx::kListMeta, lmRemaining): return ++skip_, true;
      case key(Ctx::kTop, tItems): return push(Ctx::kItems, true), true;
      case key(Ctx::kMeta, mOwnerRefs): return push(Ctx::kOwnerRefs, true), true;
      case key(Ctx::kMeta, mFinalizers): return push(Ctx::kFinalizers, true), true;
      case key(Ctx::kRequired, 1): return push(Ctx::kTerms, true), true;
      case key(Ctx::kTerm, tmExpressions): req_which_ = 0; return push(Ctx::kReqs, true), true;
      case key(Ctx::kTerm, tmFields): req_which_ = 1; return push(Ctx::kReqs, true), true;
      case key(Ctx::kReq, rValues): return push(Ctx::kReqValues, true), true;
      case key(Ctx::kSpec, sTolerations): return push(Ctx::kTolerations, true), true;
      case key(Ctx::kSpec, sInitContainers): container_which_ = 0; return push(Ctx::kContainers, true), true;
      case key(Ctx::kSpec, sContainers): container_which_ = 1; return push(Ctx::kContainers, true), true;
      case key(Ctx::kStatus, stConditions): return push(Ctx::kConditions, true), true;
      case key(Ctx::kStatus, stInitStatuses): status_which_ = 0; return push(Ctx::kStatuses, true), true;
      case key(Ctx::kStatus, stStatuses): status_which_ = 1; return push(Ctx::kStatuses, true), true;
      default: return give_up(ec);
    }
  }

  bool on_array_end(std::size_t, json::error_code&) {
    if (skip_) return --skip_, true;
    stack_.pop_back();
    return true;
  }

  bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
    if (!skip_) part_.append(s.data(), s.size());
    return true;
  }
  bool on_key(json::string_view s, std::size_t, json::error_code& ec) {
    if (skip_) return part_.clear(), true;
    std::string_view k = whole(s);
    Frame& f = stack_.back();
    if (is_map(f.ctx)) {
      map_key_.assign(k);
      f.field = 1;
    } else {
      f.field = field_of(f.ctx, k);
      if (f.field) {
        // A member given twice: which one decode_pod_typed takes is the
        // DOM's to say.
        uint32_t bit = 1u << f.field;
        if (f.seen & bit) return give_up(ec);
        f.seen |= bit;
      }
    }
    part_.clear();
    return true;
  }

  bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
    if (!skip_) part_.append(s.data(), s.size());
    return true;
  }
  bool on_string(json::string_view sv, std::size_t, json::error_code& ec) {
    if (skip_) return part_.clear(), true;
    bool ok = string(whole(sv));
    part_.clear();
    return ok || give_up(ec);
  }

  bool on_number_part(json::string_view, json::error_code&) { return true; }
  bool on_int64(std::int64_t v, json::string_view, json::error_code& ec) { return integer(v) || give_up(ec); }
  bool on_uint64(std::uint64_t, json::string_view, json::error_code& ec) { return other() || give_up(ec); }
  bool on_double(double, json::string_view, json::error_code& ec) { return other() || give_up(ec); }
  bool on_bool(bool b, json::error_code& ec) { return boolean(b) || give_up(ec); }
  bool on_null(json::error_code& ec) { return other() || give_up(ec); }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }

 private:
  struct Frame {
    Ctx ctx;
    bool array;
    uint8_t which;  // kResourceList: requests 0, limits 1; kStateDetail: the state
    uint8_t field;  // objects: the member whose value comes next (0: not read)
    uint32_t seen;  // objects: the members read so far (bit = field id)
  };
  // One of a ContainerStatus's states, as read; applied at its end.
  struct Sub {
    bool present = false;
    std::string reason, message;
    std::optional<int32_t> exit_code;
    std::optional<Time> started_at;
  };

  static int field(const Frame& f) { return f.field ? key(f.ctx, f.field) : 0; }

  void push(Ctx c, bool array, uint8_t which = 0) { stack_.push_back(Frame{c, array, which, 0, 0}); }
  std::string_view whole(json::string_view s) {
    if (part_.empty()) return {s.data(), s.size()};
    part_.append(s.data(), s.size());
    return part_;
  }
  bool give_up(json::error_code& ec) {
    ec = std::make_error_code(std::errc::not_supported);
    return false;
  }

  Pod& pod() { return out_->pods.back(); }
  ObjectMeta& meta() { return pod().metadata; }
  std::vector<NodeSelectorTerm>& terms() { return *pod().spec.required_node_affinity; }
  std::vector<Requirement>& reqs() {
    return req_which_ ? terms().back().match_fields : terms().back().match_expressions;
  }
  std::vector<Container>& containers() { return container_which_ ? pod().spec.containers : pod().spec.init_containers; }
  std::vector<ContainerStatus>& statuses() {
    return status_which_ ? pod().status.container_statuses : pod().status.init_container_statuses;
  }
  ContainerStatus& status() { return statuses().back(); }

  // A value that is neither read here nor in a skipped member: a number
  // decode_pod_typed would convert or refuse, a null it would take as
  // absent; and every value where no member is read (the root, an array of
  // objects, a map) is the DOM's.
  bool other() {
    if (skip_) return true;
    if (stack_.empty()) return false;
    const Frame& f = stack_.back();
    return !f.array && !is_map(f.ctx) && (f.field == 0 || field(f) == key(Ctx::kListMeta, lmRemaining));
  }

  static bool time(std::string_view s, std::optional<Time>& out) {
    if (s.empty()) return true;  // Decoder::time: "" is no time
    try {
      out = parse_time(std::string(s));
      return true;
    } catch (const std::invalid_argument&) {
      return false;
    }
  }

  bool append_in_order(Labels& map, std::string_view s) {
    if (!map.empty() && !(map.rbegin()->first < map_key_)) return false;
    map.emplace_hint(map.end(), map_key_, s);
    return true;
  }

  bool string(std::string_view s) {
    if (stack_.empty()) return false;
    Frame& f = stack_.back();
    if (f.array) {
      if (f.ctx == Ctx::kFinalizers) return meta().finalizers.emplace_back(s), true;
      if (f.ctx == Ctx::kReqValues) return reqs().back().values.emplace_back(s), true;
      return false;
    }
    switch (f.ctx) {
      // String maps: keys in order (as Go's encoder writes a map) are appended;
      // a key out of order or given twice gives the page up to
      // Decoder::string_map, which sorts once (a flat map's insert in the
      // middle would make a hostile page quadratic).
      case Ctx::kLabels: return append_in_order(meta().labels, s);
      case Ctx::kAnnotations: return append_in_order(meta().annotations, s);
      case Ctx::kNodeSelector: return append_in_order(pod().spec.node_selector, s);
      // The resource lists: the last value of a key given twice wins, as
      // decode_resource_list.
      case Ctx::kResourceList: {
        Container& c = containers().back();
        auto& list = f.which ? c.limits : c.requests;
        try {
          list.insert_or_assign(map_key_, Quantity::parse(s));
        } catch (const QuantityError&) {
          return false;
        }
        return true;
      }
      default: break;
    }
    switch (field(f)) {
      case 0:
      case key(Ctx::kListMeta, lmRemaining): return true;
      case key(Ctx::kListMeta, lmResourceVersion): return out_->resource_version = std::string(s), true;
      case key(Ctx::kListMeta, lmContinue): return out_->continue_token = std::string(s), true;
      case key(Ctx::kMeta, mName): return meta().name = s, true;
      case key(Ctx::kMeta, mNamespace): return meta().namespace_ = s, true;
      case key(Ctx::kMeta, mUid): return meta().uid = s, true;
      case key(Ctx::kMeta, mResourceVersion): return meta().resource_version = s, true;
      case key(Ctx::kMeta, mCreation): return time(s, meta().creation_timestamp);
      case key(Ctx::kMeta, mDeletion): return time(s, meta().deletion_timestamp);
      case key(Ctx::kOwnerRef, orApiVersion): return meta().owner_references.back().api_version = s, true;
      case key(Ctx::kOwnerRef, orKind): return meta().owner_references.back().kind = s, true;
      case key(Ctx::kOwnerRef, orName): return meta().owner_references.back().name = s, true;
      case key(Ctx::kOwnerRef, orUid): return meta().owner_references.back().uid = s, true;
      case key(Ctx::kSpec, sNodeName): return pod().spec.node_name = s, true;
      case key(Ctx::kSpec, sRuntimeClass): return pod().spec.runtime_class_name = s, true;
      case key(Ctx::kReq, rKey): return reqs().back().key = s, true;
      case key(Ctx::kReq, rOperator): {
        Requirement& r = reqs().back();
        std::string op(s);
        r.op = parse_selector_operator(op);
        if (r.op == SelectorOperator::kUnknown) r.unknown_op = std::move(op);
        return true;
      }
      case key(Ctx::kToleration, toKey): return pod().spec.tolerations.back().key = s, true;
      case key(Ctx::kToleration, toOperator): return pod().spec.tolerations.back().op = s, true;
      case key(Ctx::kToleration, toValue): return pod().spec.tolerations.back().value = s, true;
      case key(Ctx::kToleration, toEffect): return pod().spec.tolerations.back().effect = s, true;
      case key(Ctx::kContainer, cName): return containers().back().name = s, true;
      case key(Ctx::kContainer, cImage): return containers().back().image = s, true;
      case key(Ctx::kStatus, stPhase): return pod().status.phase = s, true;
      case key(Ctx::kStatus, stReason): return pod().status.reason = s, true;
      case key(Ctx::kStatus, stMessage): return pod().status.message = s, true;
      case key(Ctx::kStatus, stPodIP): return pod().status.pod_ip = s, true;
      case key(Ctx::kStatus, stStartTime): return time(s, pod().status.start_time);
      case key(Ctx::kCondition, coType): return pod().status.conditions.back().type = s, true;
      case key(Ctx::kCondition, coStatus): return pod().status.conditions.back().status = s, true;
      case key(Ctx::kCondition, coReason): return pod().status.conditions.back().reason = s, true;
      case key(Ctx::kCondition, coMessage): return pod().status.conditions.back().message = s, true;
      case key(Ctx::kCondition, coTransition): return time(s, pod().status.conditions.back().last_transition_time);
      case key(Ctx::kCStatus, csName): return status().name = s, true;
      case key(Ctx::kStateDetail, sdReason): return subs_[f.which].reason = s, true;
      case key(Ctx::kStateDetail, sdMessage): return subs_[f.which].message = s, true;
      case key(Ctx::kStateDetail, sdStartedAt):
        // Read for running only; the other states' startedAt is not looked at.
        return f.which != 1 || time(s, subs_[1].started_at);
      case key(Ctx::kTerminated, teReason): return status().last_terminated->reason = s, true;
      case key(Ctx::kTerminated, teMessage): return status().last_terminated->message = s, true;
      default: return false;  // a string where decode_pod_typed wants another type
    }
  }

  bool integer(int64_t v) {
    if (skip_) return true;
    if (stack_.empty() || stack_.back().array || is_map(stack_.back().ctx)) return false;
    const Frame& f = stack_.back();
    auto int32 = [&](std::optional<int32_t>& out) {
      if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) return false;
      out = static_cast<int32_t>(v);
      return true;
    };
    switch (field(f)) {
      case 0: return true;
      case key(Ctx::kListMeta, lmRemaining): return out_->remaining_item_count = v, true;
      case key(Ctx::kMeta, mGeneration): return meta().generation = v, true;
      case key(Ctx::kMeta, mGrace): return meta().deletion_grace_period_seconds = v, true;
      case key(Ctx::kSpec, sGrace): return pod().spec.termination_grace_period_seconds = v, true;
      case key(Ctx::kToleration, toSeconds): return pod().spec.tolerations.back().toleration_seconds = v, true;
      case key(Ctx::kCStatus, csRestartCount): {
        std::optional<int32_t> n;
        if (!int32(n)) return false;
        status().restart_count = *n;
        return true;
      }
      case key(Ctx::kStateDetail, sdExitCode): return int32(subs_[f.which].exit_code);
      case key(Ctx::kTerminated, teExitCode): return int32(status().last_terminated->exit_code);
      default: return false;
    }
  }

  bool boolean(bool b) {
    if (skip_) return true;
    if (stack_.empty() || stack_.back().array || is_map(stack_.back().ctx)) return false;
    switch (field(stack_.back())) {
      case 0:
      case key(Ctx::kListMeta, lmRemaining): return true;
      case key(Ctx::kOwnerRef, orController): return meta().owner_references.back().controller = b, true;
      case key(Ctx::kSpec, sHostNetwork): return pod().spec.host_network = b, true;
      case key(Ctx::kCStatus, csReady): return status().ready = b, true;
      default: return false;
    }
  }

  PodListPage* out_;
  std::vector<Frame> stack_;
  int skip_ = 0;           // depth inside a member not read
  std::string part_;       // a key or string given in parts
  std::string map_key_;    // the key of the map member whose value comes next
  uint8_t req_which_ = 0;  // matchExpressions 0, matchFields 1
  uint8_t container_which_ = 0;
  uint8_t status_which_ = 0;
  std::array<Sub, 3> subs_;
};

}  // namespace

bool read_pod_list_page(std::string_view text, PodListPage& out) {
  out.pods.clear();  // its capacity kept for the next page
  out.resource_version.reset();
  out.continue_token.clear();
  out.remaining_item_count.reset();
  json::basic_parser<Handler> p(json_parse_options(), &out);
  json::error_code ec;
  std::size_t n = p.write_some(false, text.data(), text.size(), ec);
  return !ec && p.done() && n == text.size();
}

}  // namespace gpuops::core
