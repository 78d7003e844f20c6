package celeris

// refusalBody calls Config.RefusalBody for the protocol layers ("" and nil when
// unset, or when it panicked: the server's own body is sent then).
func (s *Server) refusalBody(status int) (contentType string, body []byte) {
	if s.cfg.RefusalBody == nil {
		return "", nil
	}
	defer func() {
		if p := recover(); p != nil {
			if !s.refusalBodyPanicked.Swap(true) { // any client can cause refusals: log once
				s.logger.Error("celeris: RefusalBody panicked; the server's body is sent", "status", status, "panic", p)
			}
			contentType, body = "", nil
		}
	}()
	return s.cfg.RefusalBody(status)
}
