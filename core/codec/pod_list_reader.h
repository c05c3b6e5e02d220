// core/codec/pod_list_reader.h: a page of a PodList read straight into the typed
// model, without a JSON DOM.
//
// The API audit reads every pod of a namespace, page by page. Parsing a page
// into a Boost.JSON DOM and decoding each item from it (decode_pod_typed)
// builds every key and string of the page twice; this reader takes the
// parser's events (boost::json::basic_parser) and fills core::Pod directly,
// keeping only what decode_pod_typed reads. It is a fast path, not a second
// decoder: it decodes exactly what decode_pod_typed decodes the same way,
// and gives up on anything else (a null or a number where decode_pod_typed
// would take or refuse one, a member given twice, an invalid time, quantity
// or namespace, text that is not JSON), so the caller reads that page
// through the DOM and decode_pod_typed, which give the result or the
// error. PodListReader tests compare both readings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model.h"

namespace gpuops::core {

// One page of GET .../pods: its items and the list metadata a pager reads.
struct PodListPage {
  std::vector<Pod> pods;                        // items, in order; `raw` empty, as decode_pod_typed
  std::optional<std::string> resource_version;  // metadata.resourceVersion, when given
  std::string continue_token;                   // metadata.continue, "" when absent
  // metadata.remainingItemCount, when given as an int64: the items after
  // this page (an estimate the server may give with a continue token; a
  // hint only, never trusted for more than a reservation). Any other value
  // there is ignored, as by the DOM path.
  std::optional<int64_t> remaining_item_count;
};

// Reads the body of a PodList answer into `out` (cleared first, the
// capacity of out.pods kept: a pager reuses one PodListPage). Returns
// false when the body is not a JSON object whose members are all what this
// reader decodes as decode_pod_typed does (see above): `out` is then
// unspecified and the caller reads the page through the DOM. Throws only
// std::bad_alloc. Same parse limits as boost::json::parse (depth 32, UTF-8
// checked).
bool read_pod_list_page(std::string_view json, PodListPage& out);

}  // namespace gpuops::core
