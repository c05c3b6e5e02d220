// simulator/apiserver/api_pki.h: the credentials `gpuops serve` mints at start.
//
// Everything is made in memory with OpenSSL's C API; nothing touches disk.
#pragma once

#include <string>

namespace gpuops::simulator {

// A PEM certificate and its PEM (PKCS#8) private key.
struct PemPair {
  std::string cert;
  std::string key;
};

// A fresh self-signed CA ("gpuops-serve-ca") and a server certificate it
// signs ("kube-apiserver", SANs IP:127.0.0.1 and DNS:localhost, plus
// `extra_ip_san` when not empty). EC P-256 keys, SHA-256 signatures, valid
// from one hour ago for 365 days (X509_gmtime_adj: the wall clock, as any
// certificate issuer). Throws core::ClusterError if OpenSSL fails.
struct ServingPki {
  PemPair ca;
  PemPair server;
  static ServingPki generate(const std::string& extra_ip_san = "");
};

// `bytes` random bytes from RAND_bytes, hex-encoded (2*bytes characters).
// Throws core::ClusterError if the RNG fails.
std::string random_token(int bytes = 32);

}  // namespace gpuops::simulator
