/* A self-signed serving certificate made with OpenSSL at start, valid for
 * 127.0.0.1 and localhost; it is its own CA (ca.crt in the state dir). */
#ifndef KS_TLS_H
#define KS_TLS_H

/* Generate key and certificate; *cert_pem and *key_pem are malloc'd PEM
 * strings. Writes <dir>/ca.crt. Returns 0 or -1. */
int ks_tls_generate(const char *dir, char **cert_pem, char **key_pem);

#endif
