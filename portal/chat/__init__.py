"""The support chat: Members ask the agents offered to their company and open what their answers cited."""
