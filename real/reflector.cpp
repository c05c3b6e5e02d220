#include "real/reflector.h"

#include <boost/json.hpp>

#include <algorithm>
#include <random>

#include "core/base/errors.h"
#include "real/api_cluster.h"
#include "real/client.h"

namespace gpuops::real {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

std::string resource_version_of(const json::object& obj) {
  const json::value* md = obj.if_contains("metadata");
  if (!md || !md->is_object()) return "";
  const json::value* rv = md->as_object().if_contains("resourceVersion");
  return rv && rv->is_string() ? std::string(rv->as_string()) : "";
}

}  // namespace

Reflector::Reflector(RestConfig config, std::string path, ReflectorSink& sink, ReflectorOptions options)
    : config_(std::move(config)), path_(std::move(path)), sink_(sink), options_(options) {}

Reflector::~Reflector() { stop(); }

void Reflector::stop() {
  stopped_ = true;
  std::lock_guard<std::mutex> lock(mu_);
  cv_.notify_all();
}

std::string Reflector::last_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

bool Reflector::sleep_for(milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, d, [&] { return stopped_.load(); });
  return !stopped_;
}

std::chrono::milliseconds Reflector::next_backoff() {
  auto now = std::chrono::steady_clock::now();
  if (backoff_.count() == 0 || now - last_backoff_start_ > options_.backoff_reset) backoff_ = options_.initial_backoff;
  last_backoff_start_ = now;
  milliseconds d = backoff_;
  backoff_ = std::min(backoff_ * 2, options_.max_backoff);
  if (options_.jitter && d.count() > 0) {
    // wait.Jitter(d, 1.0): d + rand[0,1) * d.
    thread_local std::mt19937_64 rng{std::random_device{}()};
    d += milliseconds(std::uniform_int_distribution<int64_t>(0, d.count() - 1)(rng));
  }
  return d;
}

void Reflector::run() {
  bool first = true;
  while (!stopped_) {
    // wait.BackoffUntil(..., sliding=true): every ListAndWatch after the
    // first starts after the backoff manager's wait, whatever ended the one
    // before (a 410 included).
    if (!first && !sleep_for(next_backoff())) return;
    first = false;
    try {
      list_and_watch();
      continue;
    } catch (const ApiError& e) {
      if (e.http_status() == 410) {
        ++stats_.expired;
        continue;
      }
      if (options_.optional && (e.http_status() == 404 || e.http_status() == 403)) {
        // No CRD (or no right to it): synced and empty, asked again later.
        sink_.begin_list();
        sink_.end_list();
        stats_.synced = true;
        if (!sleep_for(options_.max_backoff)) return;
        continue;
      }
      std::lock_guard<std::mutex> lock(mu_);
      last_error_ = e.what();
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mu_);
      last_error_ = e.what();
    }
    ++stats_.failures;
  }
}

void Reflector::list_and_watch() {
  ApiClusterOptions ao;
  ao.page_size = options_.page_size;
  ApiCluster api(config_, ao);
  std::string rv;
  sink_.begin_list();
  const std::string file = "GET " + path_;
  api.list(
      path_, &rv,
      [&](json::array& items) {
        core::Document d{json::value(items.storage()), file, 0, {}, {}};
        for (auto& item : items) {
          if (!item.is_object()) throw core::ClusterError(file + ": an item of the list is not an object");
          d.value = std::move(item);
          sink_.add(d);
        }
      },
      [&] { sink_.begin_list(); });
  sink_.end_list();
  ++stats_.lists;
  stats_.synced = true;

  Client& client = api.client();
  const std::string wfile = "WATCH " + path_;
  while (!stopped_) {
    Request r{boost::beast::http::verb::get, path_, {}, "", ""};
    r.query = {{"watch", "1"},
               {"allowWatchBookmarks", "true"},
               {"resourceVersion", rv},
               {"timeoutSeconds", std::to_string(options_.watch_timeout.count())}};
    ++stats_.watches;
    bool expired = false;
    client.watch(
        r,
        [&](const json::object& ev) {
          if (stopped_) return false;
          const json::value* type = ev.if_contains("type");
          const json::value* obj = ev.if_contains("object");
          if (!type || !type->is_string() || !obj || !obj->is_object())
            throw core::ClusterError(wfile + ": an event without type or object");
          const json::string& t = type->as_string();
          const json::object& o = obj->as_object();
          if (t == "ERROR") {
            // A Status; 410 (Expired/Gone) means the resourceVersion is too old.
            const json::value* code = o.if_contains("code");
            if (code && code->is_int64() && code->as_int64() == 410) {
              expired = true;
              return false;
            }
            throw core::ClusterError(wfile + ": " +
                                     describe_status(code && code->is_int64() ? int(code->as_int64()) : 0, *obj, ""));
          }
          std::string next = resource_version_of(o);
          if (t == "ADDED" || t == "MODIFIED" || t == "DELETED") {
            core::Document d{json::value(o), wfile, 0, {}, {}};
            if (t == "DELETED")
              sink_.remove(d);
            else
              sink_.add(d);
            ++stats_.events;
          } else if (t != "BOOKMARK") {
            throw core::ClusterError(wfile + ": unknown event type \"" + std::string(t) + "\"");
          }
          if (!next.empty()) rv = std::move(next);
          return true;
        },
        options_.watch_timeout + std::chrono::seconds(30));
    if (expired) {
      ++stats_.expired;
      return;
    }
  }
}

}  // namespace gpuops::real
