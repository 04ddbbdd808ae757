class UploadSerializer:
    def __init__(self, instance=None, data=None):
        self.instance = instance

    def save(self):
        return self.instance
