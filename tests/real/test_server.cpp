#include "tests/real/test_server.h"

#include "core/base/base64.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace gpuops::real::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

std::string bio_text(BIO* b) {
  char* p = nullptr;
  long n = BIO_get_mem_data(b, &p);
  return std::string(p, static_cast<size_t>(n));
}

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test PKI: ") + what);
}

void add_ext(X509* x, X509V3_CTX* ctx, int nid, const std::string& value) {
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, ctx, nid, value.c_str());
  check(ext != nullptr, "extension");
  X509_add_ext(x, ext, -1);
  X509_EXTENSION_free(ext);
}

}  // namespace

KeyPair make_cert(const std::string& cn, const std::string& sans, const KeyPair* issuer, bool is_ca) {
  static int serial = 1;
  EVP_PKEY* key = EVP_EC_gen("P-256");
  check(key != nullptr, "key");
  X509* x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 86400);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  if (!is_ca)
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("system:masters"), -1,
                               -1, 0);
  X509* issuer_cert = x;
  EVP_PKEY* issuer_key = key;
  if (issuer) {
    BIO* b = BIO_new_mem_buf(issuer->cert.data(), static_cast<int>(issuer->cert.size()));
    issuer_cert = PEM_read_bio_X509(b, nullptr, nullptr, nullptr);
    BIO_free(b);
    b = BIO_new_mem_buf(issuer->key.data(), static_cast<int>(issuer->key.size()));
    issuer_key = PEM_read_bio_PrivateKey(b, nullptr, nullptr, nullptr);
    BIO_free(b);
    check(issuer_cert && issuer_key, "issuer");
  }
  X509_set_issuer_name(x, X509_get_subject_name(issuer_cert));
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer_cert, x, nullptr, nullptr, 0);
  add_ext(x, &ctx, NID_subject_key_identifier, "hash");
  if (is_ca) {
    add_ext(x, &ctx, NID_basic_constraints, "critical,CA:TRUE");
    add_ext(x, &ctx, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
  } else {
    add_ext(x, &ctx, NID_basic_constraints, "critical,CA:FALSE");
    add_ext(x, &ctx, NID_key_usage, "critical,digitalSignature,keyEncipherment");
    add_ext(x, &ctx, NID_ext_key_usage, "serverAuth,clientAuth");
    add_ext(x, &ctx, NID_authority_key_identifier, "keyid:always");
    if (!sans.empty()) add_ext(x, &ctx, NID_subject_alt_name, sans);
  }
  check(X509_sign(x, issuer_key, EVP_sha256()) > 0, "sign");
  KeyPair out;
  BIO* b = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(b, x);
  out.cert = bio_text(b);
  BIO_free(b);
  b = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr);
  out.key = bio_text(b);
  BIO_free(b);
  if (issuer) {
    X509_free(issuer_cert);
    EVP_PKEY_free(issuer_key);
  }
  X509_free(x);
  EVP_PKEY_free(key);
  return out;
}

const Pki& Pki::get() {
  static const Pki pki = [] {
    Pki p;
    p.ca = make_cert("gpuops-test-ca", "", nullptr, true);
    p.other_ca = make_cert("someone-else-ca", "", nullptr, true);
    p.server = make_cert("kube-apiserver", "IP:127.0.0.1,DNS:localhost", &p.ca, false);
    p.server_dns = make_cert("kube-apiserver", "DNS:localhost", &p.ca, false);
    p.client = make_cert("gpuops-admin", "", &p.ca, false);
    return p;
  }();
  return pki;
}

struct TestServer::Tls {
  ssl::context ctx{ssl::context::tls_server};
};

namespace {

template <class Stream>
class StreamExchange : public Exchange {
 public:
  StreamExchange(Stream& s, int fd, const HttpRequest& req) : s_(s), fd_(fd), req_(req) {}
  void reply(int status, const std::string& body,
             const std::vector<std::pair<std::string, std::string>>& headers) override {
    http::response<http::string_body> res{static_cast<http::status>(status), 11};
    res.set(http::field::content_type, "application/json");
    for (const auto& [k, v] : headers) res.set(k, v);
    res.body() = body;
    res.keep_alive(req_.keep_alive());
    res.prepare_payload();
    beast::error_code ec;
    http::write(s_, res, ec);
    answered = true;
  }
  void begin_stream(int status) override {
    http::response<http::empty_body> res{static_cast<http::status>(status), 11};
    res.set(http::field::content_type, "application/json");
    res.chunked(true);
    http::response_serializer<http::empty_body> sr{res};
    beast::error_code ec;
    http::write_header(s_, sr, ec);
    answered = true;
  }
  void chunk(const std::string& data) override {
    beast::error_code ec;
    asio::write(s_, http::make_chunk(asio::buffer(data)), ec);
  }
  void end_stream() override {
    beast::error_code ec;
    asio::write(s_, http::make_chunk_last(), ec);
  }
  void drop() override {
    ::shutdown(fd_, SHUT_RDWR);
    dropped = true;
  }
  bool answered = false;
  bool dropped = false;

 private:
  Stream& s_;
  int fd_;
  const HttpRequest& req_;
};

}  // namespace

TestServer::TestServer(Options options, Handler handler) : options_(std::move(options)), handler_(std::move(handler)) {
  if (options_.identity.cert.empty()) options_.identity = Pki::get().server;
  if (options_.tls) {
    tls_ = std::make_unique<Tls>();
    tls_->ctx.use_certificate_chain(asio::buffer(options_.identity.cert));
    tls_->ctx.use_private_key(asio::buffer(options_.identity.key), ssl::context::pem);
    if (!options_.client_ca.empty()) {
      tls_->ctx.add_certificate_authority(asio::buffer(options_.client_ca));
      // optional client certificates, as the API server asks for them
      tls_->ctx.set_verify_mode(ssl::verify_peer);
      tls_->ctx.set_verify_callback([](bool, ssl::verify_context&) { return true; });
    }
  }
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listen_fd_, 16) != 0)
    throw std::runtime_error("test server: cannot listen");
  socklen_t len = sizeof a;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

TestServer::~TestServer() {
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  ::close(listen_fd_);
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    workers.swap(workers_);
  }
  for (auto& t : workers) t.join();
}

std::string TestServer::url() const {
  return std::string(options_.tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

std::vector<Seen> TestServer::seen() const {
  std::lock_guard<std::mutex> l(mu_);
  return seen_;
}

void TestServer::accept_loop() {
  while (!stopping_) {
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) {
      if (stopping_) return;
      continue;
    }
    ++connections_;
    std::lock_guard<std::mutex> l(mu_);
    fds_.push_back(fd);
    workers_.emplace_back([this, fd] { serve(fd); });
  }
}

void TestServer::serve(int fd) {
  asio::io_context ioc;
  tcp::socket sock(ioc);
  sock.assign(tcp::v4(), fd);
  auto loop = [&](auto& stream, const std::string& sni, const std::string& cn) {
    beast::flat_buffer buf;
    for (;;) {
      HttpRequest req;
      beast::error_code ec;
      http::read(stream, buf, req, ec);
      if (ec) return;
      StreamExchange<std::remove_reference_t<decltype(stream)>> ex(stream, fd, req);
      ex.seen.method = std::string(req.method_string());
      ex.seen.target = std::string(req.target());
      ex.seen.authorization = std::string(req[http::field::authorization]);
      ex.seen.content_type = std::string(req[http::field::content_type]);
      ex.seen.host = std::string(req[http::field::host]);
      ex.seen.body = req.body();
      ex.seen.sni = sni;
      ex.seen.client_cn = cn;
      {
        std::lock_guard<std::mutex> l(mu_);
        seen_.push_back(ex.seen);
      }
      handler_(req, ex);
      if (ex.dropped || !ex.answered || !req.keep_alive()) {
        ::shutdown(fd, SHUT_RDWR);
        return;
      }
    }
  };
  if (!tls_) {
    loop(sock, "", "");
  } else {
    ssl::stream<tcp::socket&> s(sock, tls_->ctx);
    beast::error_code ec;
    s.handshake(ssl::stream_base::server, ec);
    if (ec) {
      ::shutdown(fd, SHUT_RDWR);
      return;
    }
    const char* sn = SSL_get_servername(s.native_handle(), TLSEXT_NAMETYPE_host_name);
    std::string cn;
    if (X509* peer = SSL_get1_peer_certificate(s.native_handle())) {
      if (SSL_get_verify_result(s.native_handle()) == X509_V_OK) {
        char b[256] = {0};
        X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, b, sizeof b);
        cn = b;
      }
      X509_free(peer);
    }
    loop(s, sn ? sn : "", cn);
  }
  // Forget the fd before it is closed, so the destructor never shuts down a
  // number the process has reused (e.g. for a client socket).
  std::lock_guard<std::mutex> l(mu_);
  fds_.erase(std::remove(fds_.begin(), fds_.end(), fd), fds_.end());
  beast::error_code ec;
  sock.close(ec);
}

std::string status_json(int code, const std::string& reason, const std::string& message,
                        const boost::json::array& causes) {
  boost::json::object st{{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", boost::json::object{}},
                         {"status", "Failure"}, {"message", message}, {"reason", reason},
                         {"code", code}};
  if (!causes.empty()) st["details"] = boost::json::object{{"causes", causes}};
  return boost::json::serialize(st);
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "gpuops-real-XXXXXX").string();
  char* p = mkdtemp(tmpl.data());
  if (!p) throw std::runtime_error("mkdtemp");
  path = p;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

std::string TempDir::write(const std::string& name, const std::string& content, bool executable) const {
  std::string full = path + "/" + name;
  std::filesystem::create_directories(std::filesystem::path(full).parent_path());
  std::ofstream(full, std::ios::binary) << content;
  if (executable) ::chmod(full.c_str(), 0755);
  return full;
}

boost::json::object list_json(const char* kind, boost::json::array items) {
  return boost::json::object{
      {"kind", kind}, {"apiVersion", "v1"}, {"metadata", {{"resourceVersion", "10"}}}, {"items", std::move(items)}};
}

std::string write_kubeconfig(const TestServer& server, const TempDir& dir) {
  return dir.write("kubeconfig", "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"" +
                                     server.url() +
                                     "\", certificate-authority-data: " + core::base64_encode(Pki::get().ca.cert) +
                                     "}}]\nusers: [{name: u, user: {token: t}}]\n"
                                     "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
                                     "current-context: x\n");
}

}  // namespace gpuops::real::testing
