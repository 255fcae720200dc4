//! HTTP app-layer events, named as Suricata 7 names them (`app-layer-event:http.<name>` in
//! rules, upper case in EVE `anomaly` records).

macro_rules! http_events {
    ($( $variant:ident => $name:literal ),* $(,)?) => {
        /// One HTTP app-layer event (anomaly) raised on a transaction.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum HttpEvent {
            $(
                #[doc = concat!("`http.", $name, "`")]
                $variant,
            )*
        }

        impl HttpEvent {
            /// Every event, in declaration order.
            pub const ALL: &'static [HttpEvent] = &[$(HttpEvent::$variant),*];

            /// The name used by `app-layer-event:http.<name>` (lower case).
            pub fn name(self) -> &'static str {
                match self {
                    $(HttpEvent::$variant => $name,)*
                }
            }
        }
    };
}

http_events! {
    UnknownError => "unknown_error",
    GzipDecompressionFailed => "gzip_decompression_failed",
    RequestFieldMissingColon => "request_field_missing_colon",
    ResponseFieldMissingColon => "response_field_missing_colon",
    InvalidRequestChunkLen => "invalid_request_chunk_len",
    InvalidResponseChunkLen => "invalid_response_chunk_len",
    InvalidTransferEncodingValueInRequest => "invalid_transfer_encoding_value_in_request",
    InvalidTransferEncodingValueInResponse => "invalid_transfer_encoding_value_in_response",
    InvalidContentLengthFieldInRequest => "invalid_content_length_field_in_request",
    InvalidContentLengthFieldInResponse => "invalid_content_length_field_in_response",
    DuplicateContentLengthFieldInRequest => "duplicate_content_length_field_in_request",
    DuplicateContentLengthFieldInResponse => "duplicate_content_length_field_in_response",
    ContinueAlreadySeen => "100_continue_already_seen",
    UnableToMatchResponseToRequest => "unable_to_match_response_to_request",
    InvalidServerPortInRequest => "invalid_server_port_in_request",
    InvalidAuthorityPort => "invalid_authority_port",
    RequestHeaderInvalid => "request_header_invalid",
    ResponseHeaderInvalid => "response_header_invalid",
    MissingHostHeader => "missing_host_header",
    HostHeaderAmbiguous => "host_header_ambiguous",
    InvalidRequestFieldFolding => "invalid_request_field_folding",
    InvalidResponseFieldFolding => "invalid_response_field_folding",
    RequestFieldTooLong => "request_field_too_long",
    ResponseFieldTooLong => "response_field_too_long",
    FileNameTooLong => "file_name_too_long",
    RequestLineInvalid => "request_line_invalid",
    RequestBodyUnexpected => "request_body_unexpected",
    RequestServerPortTcpPortMismatch => "request_server_port_tcp_port_mismatch",
    RequestUriHostInvalid => "request_uri_host_invalid",
    RequestHeaderHostInvalid => "request_header_host_invalid",
    RequestAuthUnrecognized => "request_auth_unrecognized",
    RequestHeaderRepetition => "request_header_repetition",
    ResponseHeaderRepetition => "response_header_repetition",
    DoubleEncodedUri => "double_encoded_uri",
    UriDelimNonCompliant => "uri_delim_non_compliant",
    MethodDelimNonCompliant => "method_delim_non_compliant",
    RequestLineLeadingWhitespace => "request_line_leading_whitespace",
    TooManyEncodingLayers => "too_many_encoding_layers",
    AbnormalCeHeader => "abnormal_ce_header",
    ResponseMultipartByteranges => "response_multipart_byteranges",
    ResponseAbnormalTransferEncoding => "response_abnormal_transfer_encoding",
    ResponseChunkedOldProto => "response_chunked_old_proto",
    ResponseInvalidProtocol => "response_invalid_protocol",
    ResponseInvalidStatus => "response_invalid_status",
    RequestLineIncomplete => "request_line_incomplete",
    LzmaMemlimitReached => "lzma_memlimit_reached",
    CompressionBomb => "compression_bomb",
    RangeInvalid => "range_invalid",
    RequestChunkExtension => "request_chunk_extension",
    RequestLineMissingProtocol => "request_line_missing_protocol",
    RequestTooManyHeaders => "request_too_many_headers",
    ResponseTooManyHeaders => "response_too_many_headers",
    MultipartGenericError => "multipart_generic_error",
    MultipartNoFiledata => "multipart_no_filedata",
    MultipartInvalidHeader => "multipart_invalid_header",
    TooManyWarnings => "too_many_warnings",
    FailedProtocolChange => "failed_protocol_change",
}

impl HttpEvent {
    /// Looks an event up by its rule name (`request_field_too_long`, without `http.`).
    pub fn from_name(name: &str) -> Option<HttpEvent> {
        Self::ALL.iter().copied().find(|e| e.name() == name)
    }

    /// The name EVE `anomaly` records carry: the rule name in upper case.
    pub fn eve_name(self) -> String {
        self.name().to_ascii_uppercase()
    }

    fn bit(self) -> u64 {
        1u64 << (self as u8)
    }
}

/// The set of events raised on one transaction (a bit set; each event counts once per
/// transaction, as `app-layer-event` matching only asks whether it was raised).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HttpEvents(u64);

impl HttpEvents {
    /// Adds an event; returns true if it was not set before.
    pub fn set(&mut self, e: HttpEvent) -> bool {
        let new = self.0 & e.bit() == 0;
        self.0 |= e.bit();
        new
    }

    /// Whether the event was raised.
    pub fn contains(&self, e: HttpEvent) -> bool {
        self.0 & e.bit() != 0
    }

    /// Whether no event was raised.
    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    /// The events of `self` that are not in `other`.
    pub fn without(&self, other: &HttpEvents) -> HttpEvents {
        HttpEvents(self.0 & !other.0)
    }

    /// Iterates the raised events in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = HttpEvent> + '_ {
        HttpEvent::ALL.iter().copied().filter(|e| self.contains(*e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_in_bitset_and_round_trip() {
        assert!(HttpEvent::ALL.len() <= 64);
        for e in HttpEvent::ALL {
            assert_eq!(HttpEvent::from_name(e.name()), Some(*e));
        }
        assert_eq!(
            HttpEvent::MissingHostHeader.eve_name(),
            "MISSING_HOST_HEADER"
        );
        let mut s = HttpEvents::default();
        assert!(s.set(HttpEvent::CompressionBomb));
        assert!(!s.set(HttpEvent::CompressionBomb));
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            vec![HttpEvent::CompressionBomb]
        );
    }
}
