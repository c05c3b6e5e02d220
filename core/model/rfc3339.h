// core/model/rfc3339.h: RFC 3339 timestamps as the Kubernetes API writes and reads
// them (metav1.Time, k8s.io/apimachinery/pkg/apis/meta/v1/time.go).
//
// Shapes: written as "2026-11-20T08:00:00Z" (UTC, whole seconds, as
// metav1.Time.MarshalJSON); read as Go's time.Parse(time.RFC3339, ...) reads
// (metav1.Time.UnmarshalJSON), to the millisecond of core::Time.
#pragma once

#include <string>

#include "core/model/model.h"

namespace gpuops::core {

// "YYYY-MM-DDTHH:MM:SSZ" in UTC; milliseconds are dropped, as the API drops
// the fraction (metav1.Time.MarshalJSON writes whole seconds). No error case.
std::string format_time(Time t);

// Parses `text` as Go's time.Parse(time.RFC3339, text) does: a fraction is
// kept to the millisecond, a "+hh:mm"/"-hh:mm" offset is applied. Throws
// std::invalid_argument on text that is not RFC 3339 (Go's error), e.g. a
// lower-case 't' or 'z', a space for 'T', a day past the month's end.
Time parse_time(const std::string& text);

}  // namespace gpuops::core
