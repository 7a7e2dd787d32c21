"""Answer feedback: ratings of chat answers, their triage under Build, and regression cases."""
