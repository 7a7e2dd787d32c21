from portal import create_app

app = create_app()
