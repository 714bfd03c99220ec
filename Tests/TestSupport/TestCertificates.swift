import Foundation

/// Certificates a TLS test needs and Samples/certs does not hold (expired, not yet valid, self-signed,
/// issued under an intermediate), made at test time with the openssl command in a folder of the test's.
///
/// Leaves are issued for cdn.example.com (the host tests map to the asset server) by `openssl ca`,
/// which alone among OpenSSL 3.0's commands takes explicit validity dates.
///
/// ```swift
/// let certs = try TestCertificates(in: folder)
/// let expired = try certs.leaf("expired", signedBy: .testCA, from: "20200101000000Z", to: "20210101000000Z")
/// ```
package struct TestCertificates: Sendable {
    /// A certificate and its key, as PEM files.
    package struct Issued: Sendable {
        package var certificate: String
        package var key: String
        /// The PEM text of the certificate.
        package func pem() throws -> String { try String(contentsOfFile: certificate, encoding: .utf8) }
    }

    /// Who signs a leaf.
    package enum Signer: Sendable {
        /// Samples/certs/ca.pem, which tests trust through the policy's CA file.
        case testCA
        /// A certificate issued here (a root or an intermediate).
        case issued(Issued)
    }

    package let folder: String

    /// Prepares `folder` (it must exist) for `openssl ca`.
    package init(in folder: String) throws {
        self.folder = folder + "/certs"
        try FileManager.default.createDirectory(atPath: self.folder + "/issued", withIntermediateDirectories: true)
        try "".write(toFile: self.folder + "/index.txt", atomically: true, encoding: .utf8)
        try """
        [ca]
        default_ca = local
        [local]
        database = \(self.folder)/index.txt
        new_certs_dir = \(self.folder)/issued
        serial = \(self.folder)/serial
        default_md = sha256
        policy = any
        unique_subject = no
        [any]
        commonName = supplied
        [leaf]
        basicConstraints = critical, CA:FALSE
        keyUsage = critical, digitalSignature
        extendedKeyUsage = serverAuth
        subjectAltName = DNS:cdn.example.com
        [leaf_aia]
        basicConstraints = critical, CA:FALSE
        keyUsage = critical, digitalSignature
        extendedKeyUsage = serverAuth
        subjectAltName = DNS:cdn.example.com
        authorityInfoAccess = caIssuers;URI:http://pki.example.com/intermediate.crt
        [intermediate]
        basicConstraints = critical, CA:TRUE, pathlen:0
        keyUsage = critical, keyCertSign, cRLSign
        """.write(toFile: self.folder + "/ca.cnf", atomically: true, encoding: .utf8)
        try "1000\n".write(toFile: self.folder + "/serial", atomically: true, encoding: .utf8)
    }

    /// A self-signed CA (`ca: true`) or a self-signed server certificate for cdn.example.com.
    package func selfSigned(_ name: String, ca: Bool) throws -> Issued {
        let issued = paths(name)
        try key(issued.key)
        let extensions =
            ca
            ? ["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"]
            : ["-addext", "subjectAltName=DNS:cdn.example.com", "-addext", "basicConstraints=critical,CA:FALSE"]
        try Self.openssl(
            [
                "req", "-new", "-x509", "-sha256", "-days", "3650", "-subj",
                "/CN=\(ca ? "richpush \(name)" : "cdn.example.com")",
                "-key", issued.key, "-out", issued.certificate,
            ] + extensions)
        return issued
    }

    /// A certificate for cdn.example.com (or an intermediate CA) signed by `signer`, valid from `start`
    /// to `end` (`YYYYMMDDHHMMSSZ`), by default from yesterday for ten years.
    package func leaf(
        _ name: String, signedBy signer: Signer, from start: String? = nil, to end: String? = nil,
        intermediate: Bool = false, issuerURL: Bool = false
    ) throws -> Issued {
        let issued = paths(name)
        try key(issued.key)
        let request = folder + "/\(name).csr"
        let subject = intermediate ? "/CN=richpush \(name)" : "/CN=cdn.example.com"
        try Self.openssl(["req", "-new", "-sha256", "-subj", subject, "-key", issued.key, "-out", request])
        let (certificate, key) =
            switch signer {
            case .testCA: (Fixtures.certs + "/ca.pem", Fixtures.certs + "/ca-key.pem")
            case .issued(let ca): (ca.certificate, ca.key)
            }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMddHHmmss'Z'"
        let from = start ?? formatter.string(from: Date(timeIntervalSinceNow: -86_400))
        let to = end ?? formatter.string(from: Date(timeIntervalSinceNow: 86_400 * 3650))
        try Self.openssl([
            "ca", "-batch", "-notext", "-config", folder + "/ca.cnf", "-cert", certificate, "-keyfile", key,
            "-in", request, "-out", issued.certificate, "-startdate", from, "-enddate", to,
            "-extfile", folder + "/ca.cnf", "-extensions",
            intermediate ? "intermediate" : issuerURL ? "leaf_aia" : "leaf",
        ])
        return issued
    }

    /// A file holding `parts`' certificates one after another (a chain the server sends).
    package func chain(_ name: String, _ parts: [Issued]) throws -> String {
        let path = folder + "/\(name).pem"
        try parts.map { try $0.pem() }.joined().write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func paths(_ name: String) -> Issued {
        Issued(certificate: folder + "/\(name).pem", key: folder + "/\(name)-key.pem")
    }

    private func key(_ path: String) throws {
        try Self.openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path])
    }

    /// Runs the openssl command; throws with its stderr when it fails.
    static func openssl(_ arguments: [String]) throws {
        let result = try ChildProcess.runBlocking("/usr/bin/openssl", arguments)
        guard result.status == 0 else {
            throw CertificateFailure(message: "openssl \(arguments.first ?? ""): " + result.stderr)
        }
    }

    /// The openssl command failed.
    package struct CertificateFailure: Error, CustomStringConvertible {
        package var message: String
        package var description: String { message }
    }
}
