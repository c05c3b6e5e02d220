#include "simulator/apiserver/api_pki.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <memory>
#include <stdexcept>

#include "core/base/errors.h"

namespace gpuops::simulator {
namespace {

void check(bool ok, const char* what) {
  if (!ok) throw core::ClusterError(std::string("serve: generating credentials: ") + what);
}

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
template <class T>
using Ptr = std::unique_ptr<T, Free>;

std::string bio_text(BIO* b) {
  char* p = nullptr;
  long n = BIO_get_mem_data(b, &p);
  return std::string(p, static_cast<size_t>(n));
}

void add_ext(X509* x, X509V3_CTX* ctx, int nid, const std::string& value) {
  Ptr<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, ctx, nid, value.c_str()));
  check(ext != nullptr, "certificate extension");
  check(X509_add_ext(x, ext.get(), -1) == 1, "certificate extension");
}

// Issues a certificate for `cn`; self-signed when issuer is null.
PemPair issue(const std::string& cn, const std::string& sans, long serial, X509* issuer, EVP_PKEY* issuer_key,
              Ptr<X509>* cert_out, Ptr<EVP_PKEY>* key_out) {
  Ptr<EVP_PKEY> key(EVP_EC_gen("P-256"));
  check(key != nullptr, "EC key");
  Ptr<X509> x(X509_new());
  check(x != nullptr, "X509_new");
  X509_set_version(x.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(x.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x.get()), 365L * 86400);
  X509_set_pubkey(x.get(), key.get());
  X509_NAME* name = X509_get_subject_name(x.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509* signer = issuer ? issuer : x.get();
  EVP_PKEY* signer_key = issuer ? issuer_key : key.get();
  X509_set_issuer_name(x.get(), X509_get_subject_name(signer));
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, signer, x.get(), nullptr, nullptr, 0);
  add_ext(x.get(), &ctx, NID_subject_key_identifier, "hash");
  if (!issuer) {
    add_ext(x.get(), &ctx, NID_basic_constraints, "critical,CA:TRUE");
    add_ext(x.get(), &ctx, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
  } else {
    add_ext(x.get(), &ctx, NID_basic_constraints, "critical,CA:FALSE");
    add_ext(x.get(), &ctx, NID_key_usage, "critical,digitalSignature,keyEncipherment");
    add_ext(x.get(), &ctx, NID_ext_key_usage, "serverAuth");
    add_ext(x.get(), &ctx, NID_authority_key_identifier, "keyid:always");
    add_ext(x.get(), &ctx, NID_subject_alt_name, sans);
  }
  check(X509_sign(x.get(), signer_key, EVP_sha256()) > 0, "X509_sign");
  PemPair out;
  Ptr<BIO> b(BIO_new(BIO_s_mem()));
  check(PEM_write_bio_X509(b.get(), x.get()) == 1, "PEM certificate");
  out.cert = bio_text(b.get());
  b.reset(BIO_new(BIO_s_mem()));
  check(PEM_write_bio_PrivateKey(b.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1, "PEM key");
  out.key = bio_text(b.get());
  if (cert_out) *cert_out = std::move(x);
  if (key_out) *key_out = std::move(key);
  return out;
}

}  // namespace

ServingPki ServingPki::generate(const std::string& extra_ip_san) {
  ServingPki pki;
  Ptr<X509> ca_cert;
  Ptr<EVP_PKEY> ca_key;
  pki.ca = issue("gpuops-serve-ca", "", 1, nullptr, nullptr, &ca_cert, &ca_key);
  std::string sans = "IP:127.0.0.1,DNS:localhost";
  if (!extra_ip_san.empty() && extra_ip_san != "127.0.0.1") sans += ",IP:" + extra_ip_san;
  pki.server = issue("kube-apiserver", sans, 2, ca_cert.get(), ca_key.get(), nullptr, nullptr);
  return pki;
}

std::string random_token(int bytes) {
  std::string raw(static_cast<size_t>(bytes), '\0');
  check(RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), bytes) == 1, "RAND_bytes");
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out.push_back(hex[c >> 4]);
    out.push_back(hex[c & 15]);
  }
  return out;
}

}  // namespace gpuops::simulator
